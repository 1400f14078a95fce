// The checkpoint directory: one sub-directory per checkpoint, named after its step.
//
//   <checkpoint.dir>/step_00000100/        a complete checkpoint (it holds COMPLETE)
//   <checkpoint.dir>/step_00000200.tmp/    one being written, or left by a crash: never read
//
// A checkpoint is written under the .tmp name and renamed once COMPLETE is in it, so a directory
// with the final name is always whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace zt::checkpoint {

inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kCompleteFile = "COMPLETE";
inline constexpr const char* kPartialSuffix = ".tmp";

std::string checkpoint_dir_name(std::int64_t step);  // "step_00000100"
// "rank_00001.exp_avg.f32": shard rank 1's exp_avg, raw little-endian fp32.
std::string shard_file_name(int rank, const std::string& kind);

// Complete checkpoints under root, oldest first (none when root does not exist).
std::vector<std::filesystem::path> complete_checkpoints(const std::filesystem::path& root);
std::optional<std::filesystem::path> newest_complete_checkpoint(const std::filesystem::path& root);
// A complete checkpoint and the run that saved it (from its manifest).
struct SavedCheckpoint {
  std::filesystem::path dir;
  std::int64_t step = 0;
  std::string run_id;           // "" for checkpoints without one (older versions) or an unreadable manifest
  std::int64_t save_index = 0;  // the run's save counter: higher is newer
};
// Complete checkpoints under root, with their run, oldest save first (by run, then save order).
std::vector<SavedCheckpoint> saved_checkpoints(const std::filesystem::path& root);

// Deletes all but the newest keep_last saves of run `run_id` (keep_last 0: keep all), by save
// order, never by step: the checkpoint just written is never among them, and other runs'
// checkpoints are never touched. Returns the directories removed.
std::vector<std::filesystem::path> prune_checkpoints(const std::filesystem::path& root, std::int64_t keep_last,
                                                     const std::string& run_id);
// Deletes the .tmp directories that interrupted writes left behind. Returns them.
std::vector<std::filesystem::path> remove_partial_checkpoints(const std::filesystem::path& root);

}  // namespace zt::checkpoint
