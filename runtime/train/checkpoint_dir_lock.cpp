#include "runtime/train/checkpoint_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
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

CheckpointDirLock CheckpointDirLock::opened(const std::filesystem::path& path, std::string& problem) {
  CheckpointDirLock lock;
  try {
    lock.fd_ = open_no_follow(path, O_RDWR | O_CREAT);
  } catch (const UserError& e) {
    problem = e.what();
  }
  return lock;
}

CheckpointDirLock CheckpointDirLock::take(const std::filesystem::path& dir, std::string& problem, bool* busy) {
  const std::filesystem::path path = dir / ".zerotrain.lock";
  CheckpointDirLock lock = opened(path, problem);
  if (lock.fd_ < 0) return lock;
  if (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (busy != nullptr) *busy = error == EWOULDBLOCK;
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

namespace {
std::filesystem::path rank_lock_path(const std::filesystem::path& dir) { return dir / ".zerotrain.ranks"; }
}  // namespace

void CheckpointDirLock::wait_for_earlier_ranks(const std::filesystem::path& dir, std::chrono::milliseconds limit) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return;
  {
    // A process that holds the directory's lock is an earlier attempt of this job whose rank 0 is
    // still ending (a restart right after a failure: teardown takes seconds), or another run that
    // lives on. Wait a little for the first; the second is then refused with its pid and host by
    // the checkpoint.dir check (take), not kept waiting for its ranks.
    const auto start = std::chrono::steady_clock::now();
    bool said = false;
    for (;;) {
      std::string held_by;
      bool busy = false;
      if (take(dir, held_by, &busy).fd_ >= 0) break;
      if (!busy || std::chrono::steady_clock::now() - start >= kLiveRunGrace) return;
      if (!said) {
        log::info("checkpoint.dir: {} is held by another process (an earlier attempt of this job still ending?); "
                  "waiting up to {} s for it to end",
                  (dir / ".zerotrain.lock").string(),
                  std::chrono::duration_cast<std::chrono::seconds>(kLiveRunGrace).count());
        said = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (said)
      log::info("checkpoint.dir: the run that held {} ended after {:.1f} s", (dir / ".zerotrain.lock").string(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::string unopened;  // left to the checkpoint.dir check, which names what is wrong
  CheckpointDirLock lock = opened(rank_lock_path(dir), unopened);
  if (lock.fd_ < 0) return;
  const auto start = std::chrono::steady_clock::now();
  bool said = false;
  while (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return;
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited >= limit) {
      // Not a reason to fail a restart: a node that crashed can leave its lock on a network file
      // system for minutes.
      log::warn("checkpoint.dir: {} is still held after {} s (ranks of an earlier run that live on, perhaps on other "
                "nodes, or the lock of a node that crashed): going on",
                rank_lock_path(dir).string(), std::chrono::duration_cast<std::chrono::seconds>(limit).count());
      return;
    }
    if (!said && waited >= std::chrono::milliseconds(500)) {
      log::info("checkpoint.dir: waiting for the ranks of an earlier run to end (they hold {})",
                rank_lock_path(dir).string());
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (said)
    log::info("checkpoint.dir: the earlier run's ranks ended after {:.1f} s",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  // The exclusive lock goes with `lock`.
}

CheckpointDirLock CheckpointDirLock::take_rank_share(const std::filesystem::path& dir, std::string& problem) {
  CheckpointDirLock lock = opened(rank_lock_path(dir), problem);
  if (lock.fd_ < 0) return lock;
  // Another run's rank 0 may hold the exclusive lock for the moment of its look (above): retry,
  // never block.
  for (int attempt = 0; ::flock(lock.fd_, LOCK_SH | LOCK_NB) != 0; ++attempt) {
    if (errno != EWOULDBLOCK || attempt == 100) {
      problem = fmt::format("{}: cannot lock: {}", rank_lock_path(dir).string(), std::strerror(errno));
      ::close(std::exchange(lock.fd_, -1));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return lock;
}

}  // namespace zt
