// Finds out at start-up, not at the first save hours later, whether checkpoints can be written:
// the checkpoint directory must be creatable and writable from this rank (a read-only mount, a
// path through a file, missing permissions all fail here), and it should have room for a
// checkpoint (statvfs; only a warning, since space on shared filesystems comes and goes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace zt {

// Why this rank cannot write into `dir` (after creating it), or nothing. Writes, syncs and
// removes one small probe file under a fresh unique name (never following a planted link).
std::optional<std::string> checkpoint_dir_problem(const std::filesystem::path& dir, int rank);

// A warning when the filesystem of `dir` has less than `checkpoint_bytes` free, or nothing.
std::optional<std::string> checkpoint_space_warning(const std::filesystem::path& dir, std::uint64_t checkpoint_bytes);

}  // namespace zt
