// What a rank's training data is: the files a glob names, their sizes and the CRC32 of their whole
// content. Two ranks whose fingerprints agree read the same bytes with near certainty for any
// realistic mistake (another copy of the data, a file re-prepared with another tokenizer, a
// truncated copy, a byte changed anywhere), at the cost of reading and hashing every file once at
// start-up on every rank (measured by bench/fingerprint_startup.sh: bench/results/reliability.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace zt {

struct DataFileDigest {
  std::string path;  // as the glob gives it
  std::uint64_t bytes = 0;
  std::uint32_t crc32 = 0;  // of the whole file
  bool operator==(const DataFileDigest&) const = default;
};

// Digests of the files matching `pattern`, sorted by name. Throws zt::UserError when nothing
// matches or a file cannot be read.
std::vector<DataFileDigest> digest_data_files(const std::string& pattern);

// Digests of what `model.init_from` reads: the config.json beside the weights (when there is one)
// and the weights (DIR/model.safetensors, or the .safetensors file named). Throws zt::UserError
// when the weights are not a regular file that can be read.
std::vector<DataFileDigest> digest_init_from(const std::filesystem::path& init_from);

}  // namespace zt
