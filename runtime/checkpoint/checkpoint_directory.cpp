#include "runtime/checkpoint/checkpoint_directory.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/safe_file.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

// The step of a directory named step_<digits>, if that is its name.
std::optional<std::int64_t> step_of(const std::string& name) {
  constexpr std::string_view prefix = "step_";
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  std::int64_t step = 0;
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(name.data() + prefix.size(), end, step);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return step;
}

}  // namespace

std::string checkpoint_dir_name(std::int64_t step) { return fmt::format("step_{:08}", step); }

std::string shard_file_name(int rank, const std::string& kind) { return fmt::format("rank_{:05}.{}.f32", rank, kind); }

std::vector<fs::path> complete_checkpoints(const fs::path& root) {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    auto step = step_of(entry.path().filename().string());
    if (step && entry.is_directory() && fs::exists(entry.path() / kCompleteFile)) found.emplace_back(*step, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  for (auto& [step, path] : found) paths.push_back(path);
  return paths;
}

std::optional<fs::path> newest_complete_checkpoint(const fs::path& root) {
  auto all = complete_checkpoints(root);
  if (all.empty()) return std::nullopt;
  return all.back();
}

std::vector<SavedCheckpoint> saved_checkpoints(const fs::path& root) {
  std::vector<SavedCheckpoint> saved;
  for (const fs::path& dir : complete_checkpoints(root)) {
    SavedCheckpoint c{dir, *step_of(dir.filename().string()), "", 0};
    // Read only if it is a regular file: a named pipe here must not hang every run that lists the
    // directory (reading the checkpoint then says what is wrong with it).
    std::string why;
    const std::optional<std::string> text = read_regular_file(dir / kManifestFile, why);
    const nlohmann::json manifest =
        text ? nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false) : nlohmann::json();
    if (!text) c.run_id = fmt::format("unknown: {} is {}", (dir / kManifestFile).string(), why);
    if (manifest.is_object()) {
      if (auto id = manifest.find("run_id"); id != manifest.end() && id->is_string()) c.run_id = id->get<std::string>();
      if (auto index = manifest.find("save_index"); index != manifest.end() && index->is_number_integer())
        c.save_index = index->get<std::int64_t>();
    }
    saved.push_back(std::move(c));
  }
  std::stable_sort(saved.begin(), saved.end(), [](const SavedCheckpoint& a, const SavedCheckpoint& b) {
    return std::tie(a.run_id, a.save_index, a.step) < std::tie(b.run_id, b.save_index, b.step);
  });
  return saved;
}

std::vector<fs::path> prune_checkpoints(const fs::path& root, std::int64_t keep_last, const std::string& run_id) {
  std::vector<fs::path> removed;
  if (keep_last <= 0) return removed;
  std::vector<fs::path> mine;  // oldest save first
  for (const SavedCheckpoint& c : saved_checkpoints(root))
    if (c.run_id == run_id) mine.push_back(c.dir);
  const auto keep = static_cast<std::size_t>(keep_last);
  for (std::size_t i = 0; i + keep < mine.size(); ++i) {
    fs::remove_all(mine[i]);
    removed.push_back(mine[i]);
  }
  return removed;
}

std::vector<fs::path> remove_partial_checkpoints(const fs::path& root) {
  std::vector<fs::path> removed;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.ends_with(kPartialSuffix) &&
        step_of(name.substr(0, name.size() - std::string_view(kPartialSuffix).size())))
      removed.push_back(entry.path());
  }
  for (const fs::path& path : removed) fs::remove_all(path);
  return removed;
}

}  // namespace zt::checkpoint
