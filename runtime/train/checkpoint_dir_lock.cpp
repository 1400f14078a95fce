#include "runtime/train/checkpoint_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/safe_file.h"

namespace zt {

CheckpointDirLock::~CheckpointDirLock() {
  if (fd_ >= 0) ::close(fd_);
}

CheckpointDirLock::CheckpointDirLock(CheckpointDirLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

CheckpointDirLock& CheckpointDirLock::operator=(CheckpointDirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

CheckpointDirLock CheckpointDirLock::take(const std::filesystem::path& dir, std::string& problem) {
  const std::filesystem::path path = dir / ".zerotrain.lock";
  CheckpointDirLock lock;
  try {
    lock.fd_ = open_no_follow(path, O_RDWR | O_CREAT);
  } catch (const UserError& e) {
    problem = e.what();
    return lock;
  }
  if (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    std::array<char, 256> holder{};
    const ssize_t n = ::pread(lock.fd_, holder.data(), holder.size() - 1, 0);
    const std::string who = n > 0 ? std::string(holder.data(), static_cast<std::size_t>(n)) : "another process";
    problem = error == EWOULDBLOCK
                  ? fmt::format("{} is in use by another run ({}); one directory takes one run: wait for it to end, "
                                "or give this run another checkpoint.dir",
                                dir.string(), who)
                  : fmt::format("{}: cannot lock: {}", path.string(), std::strerror(error));
    ::close(std::exchange(lock.fd_, -1));
    return lock;
  }
  // Who holds it, for the message a second run prints.
  std::array<char, 256> host{};
  ::gethostname(host.data(), host.size() - 1);
  const std::string who = fmt::format("pid {} on host {}", ::getpid(), host.data());
  if (::ftruncate(lock.fd_, 0) == 0) (void)::pwrite(lock.fd_, who.data(), who.size(), 0);
  return lock;
}

}  // namespace zt
