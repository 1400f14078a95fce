// The shard files a pattern names.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace zt::data {

// The files matching a shell glob pattern ("data/fortunes/train_*.bin"), sorted by name; a
// pattern without wildcards names one file. Throws zt::UserError when nothing matches.
std::vector<std::filesystem::path> expand_shard_pattern(std::string_view pattern);

}  // namespace zt::data
