// One checkpoint.dir, one run. Two runs started on the same directory would replace each other's
// checkpoints (both logging every save as written) or fail on each other's temporary files, so the
// training job holds an exclusive lock (flock) on <dir>/.zerotrain.lock for its whole life; a
// second run is refused at start-up with the holder's process and host. The lock goes with the
// process, however it ends; the file stays, empty of meaning until the next run locks it.
#pragma once

#include <filesystem>
#include <string>

namespace zt {

class CheckpointDirLock {
 public:
  CheckpointDirLock() = default;
  ~CheckpointDirLock();
  CheckpointDirLock(CheckpointDirLock&& other) noexcept;
  CheckpointDirLock& operator=(CheckpointDirLock&& other) noexcept;

  // Takes the lock of `dir` (which exists), or returns one that holds nothing and sets `problem`
  // to why: another run holds it ("held by pid 1234 on host n1"), or the lock file cannot be opened.
  static CheckpointDirLock take(const std::filesystem::path& dir, std::string& problem);

 private:
  int fd_ = -1;
};

}  // namespace zt
