// One checkpoint.dir, one run. Two runs started on the same directory would replace each other's
// checkpoints (both logging every save as written) or fail on each other's temporary files, so the
// training job holds an exclusive lock (flock) on <dir>/.zerotrain.lock for its whole life; a
// second run is refused at start-up with the holder's process and host, after waiting
// kLiveRunGrace for the holder to end (a restart may start while the failed attempt's rank 0 is
// still being torn down). The lock goes with the
// process, however it ends; the file stays, empty of meaning until the next run locks it.
//
// Every rank also holds a shared lock on <dir>/.zerotrain.ranks for its life, and a new run's rank
// 0 waits until nobody holds it before the run reads the directory: ranks of an earlier attempt
// outlive their launcher by a second or two (remote ranks, after mpirun has returned), and a
// restart must not resume, or allocate a GPU, while they still run.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace zt {

// How long a new run waits for the holder of <dir>/.zerotrain.lock to end before it is refused:
// longer than a failed attempt's teardown (2-4 s across hosts), short enough for a user who started
// a second run by mistake.
inline constexpr std::chrono::seconds kLiveRunGrace{10};

class CheckpointDirLock {
 public:
  CheckpointDirLock() = default;
  ~CheckpointDirLock();
  CheckpointDirLock(CheckpointDirLock&& other) noexcept;
  CheckpointDirLock& operator=(CheckpointDirLock&& other) noexcept;

  // Takes the lock of `dir` (which exists), or returns one that holds nothing and sets `problem`
  // to why: another run holds it ("held by pid 1234 on host n1"; *busy set), or the lock file
  // cannot be opened.
  static CheckpointDirLock take(const std::filesystem::path& dir, std::string& problem, bool* busy = nullptr);

  // Rank 0, before the run reads `dir`: waits up to kLiveRunGrace for a process that holds the
  // directory's lock to end (an earlier attempt's rank 0 that is still ending; a run that lives on
  // is then refused by take()), then up to `limit` until no process holds its ranks lock (logging
  // when it has to wait, and warning when it gives up waiting). A lock file that cannot be made is
  // left to the checkpoint.dir check, which names what is wrong.
  static void wait_for_earlier_ranks(const std::filesystem::path& dir, std::chrono::milliseconds limit);
  // Every rank: the shared ranks lock of `dir` (which exists), held until destroyed; `problem`
  // says why it could not be taken.
  static CheckpointDirLock take_rank_share(const std::filesystem::path& dir, std::string& problem);

 private:
  // `path` opened (created if missing, never through a link), or an empty lock with `problem` set.
  static CheckpointDirLock opened(const std::filesystem::path& path, std::string& problem);

  int fd_ = -1;
};

}  // namespace zt
