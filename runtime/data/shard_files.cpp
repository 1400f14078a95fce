#include "runtime/data/shard_files.h"

#include <glob.h>
#include <sys/stat.h>

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

// Where token shards come from, for a newcomer whose data is not there yet.
constexpr const char* kMakeShards =
    "; make token shards from text with `zerotrain prepare-data` (its --help shows how), or run "
    "`bash scripts/prepare-default-data.sh` for the data of the configs in configs/";

// A FIFO (or a device) that matches a data glob would block the first read forever, before any
// signal is looked at: refuse everything but regular files up front, without opening them.
void check_regular_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return;  // opening it says what is wrong
  if (S_ISREG(info.st_mode)) return;
  const char* kind = S_ISFIFO(info.st_mode)  ? "a FIFO"
                     : S_ISDIR(info.st_mode) ? "a directory"
                     : S_ISSOCK(info.st_mode) ? "a socket"
                                              : "a device";
  throw UserError(fmt::format("{}: not a regular file ({}); token shards must be regular files", path, kind));
}

}  // namespace

std::vector<std::filesystem::path> expand_shard_pattern(std::string_view pattern) {
  const std::string pattern_text(pattern);
  if (pattern_text.empty()) throw UserError("no token shard files given (empty pattern)");
  const bool has_wildcard = pattern_text.find_first_of("*?[") != std::string::npos;
  if (!has_wildcard) {
    if (!std::filesystem::exists(pattern_text))
      throw UserError(fmt::format("{}: no such token shard file{}", pattern_text, kMakeShards));
    if (std::filesystem::is_directory(pattern_text)) {
      throw UserError(fmt::format("{}: is a directory; name the shard files, e.g. {}/train_*.bin", pattern_text,
                                  pattern_text));
    }
    check_regular_file(pattern_text);
    return {pattern_text};
  }
  GlobResult matches;
  const int status = ::glob(pattern_text.c_str(), 0, nullptr, matches.get());  // sorted by default
  if (status == GLOB_NOMATCH)
    throw UserError(fmt::format("{}: no token shard files match this pattern{}", pattern_text, kMakeShards));
  if (status != 0) throw UserError(fmt::format("{}: cannot expand this pattern (glob error {})", pattern_text, status));
  std::vector<std::filesystem::path> files;
  for (std::size_t i = 0; i < matches.get()->gl_pathc; ++i) {
    check_regular_file(matches.get()->gl_pathv[i]);
    files.emplace_back(matches.get()->gl_pathv[i]);
  }
  return files;
}

}  // namespace zt::data
