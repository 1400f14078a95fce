#include "runtime/data/shard_files.h"

#include <glob.h>

#include <string>

#include <fmt/format.h>

#include "core/error.h"

namespace zt::data {
namespace {

// Frees glob(3)'s result on every path out.
class GlobResult {
 public:
  GlobResult() = default;
  ~GlobResult() { ::globfree(&result_); }
  GlobResult(const GlobResult&) = delete;
  GlobResult& operator=(const GlobResult&) = delete;
  glob_t* get() { return &result_; }

 private:
  glob_t result_{};
};

}  // namespace

std::vector<std::filesystem::path> expand_shard_pattern(std::string_view pattern) {
  const std::string pattern_text(pattern);
  if (pattern_text.empty()) throw UserError("no token shard files given (empty pattern)");
  const bool has_wildcard = pattern_text.find_first_of("*?[") != std::string::npos;
  if (!has_wildcard) {
    if (!std::filesystem::exists(pattern_text)) throw UserError(fmt::format("{}: no such token shard file", pattern_text));
    if (std::filesystem::is_directory(pattern_text)) {
      throw UserError(fmt::format("{}: is a directory; name the shard files, e.g. {}/train_*.bin", pattern_text,
                                  pattern_text));
    }
    return {pattern_text};
  }
  GlobResult matches;
  const int status = ::glob(pattern_text.c_str(), 0, nullptr, matches.get());  // sorted by default
  if (status == GLOB_NOMATCH) throw UserError(fmt::format("{}: no token shard files match this pattern", pattern_text));
  if (status != 0) throw UserError(fmt::format("{}: cannot expand this pattern (glob error {})", pattern_text, status));
  std::vector<std::filesystem::path> files;
  for (std::size_t i = 0; i < matches.get()->gl_pathc; ++i) files.emplace_back(matches.get()->gl_pathv[i]);
  return files;
}

}  // namespace zt::data
