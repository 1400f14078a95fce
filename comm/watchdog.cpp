#include "comm/watchdog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "comm/comm_options.h"
#include "runtime/core/log.h"

namespace zt {

namespace {
// Often enough that a short test timeout fires promptly, rarely enough to cost nothing.
std::chrono::milliseconds poll_interval(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 10, std::chrono::milliseconds(10), std::chrono::milliseconds(200));
}
}  // namespace

Watchdog::Watchdog(std::chrono::milliseconds timeout, TimeoutHandler handler)
    : timeout_(std::min(timeout, kMaxCommTimeout)), handler_(std::move(handler)), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::track(std::shared_ptr<detail::WorkState> work) {
  std::lock_guard lock(mutex_);
  pending_.push_back(std::move(work));
}

std::string Watchdog::timeout_message(const detail::WorkState& work, std::chrono::milliseconds elapsed,
                                      std::chrono::milliseconds timeout) {
  return fmt::format(
      "comm timeout: {} has not completed after {:.1f} s (comm.timeout {:.1f} s); a peer rank may have died or "
      "ranks issued different collectives (comm.debug_check compares them before each collective); ending this "
      "process with exit code {}",
      work.where(), elapsed.count() / 1000.0, timeout.count() / 1000.0, kCommTimeoutExitCode);
}

void Watchdog::log_and_exit(const std::string& message) {
  log::error("{}", message);
  std::fflush(nullptr);
  std::_Exit(kCommTimeoutExitCode);
}

void Watchdog::loop() {
  const auto interval = poll_interval(timeout_);
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, interval, [&] { return stopping_; });
    if (stopping_) return;
    std::vector<std::shared_ptr<detail::WorkState>> overdue;
    auto now = std::chrono::steady_clock::now();
    std::erase_if(pending_, [&](const std::shared_ptr<detail::WorkState>& work) {
      bool completed = true;
      try {
        completed = work->done.query();
      } catch (...) {
        // A failed device query: the error is the Work's to report, not a hang.
      }
      if (completed) return true;
      if (!work->started() || now - work->started_at() < timeout_) return false;
      overdue.push_back(work);
      return true;
    });
    // The handler may block or exit; never call it with the lock held.
    lock.unlock();
    for (const auto& work : overdue) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - work->started_at());
      handler_(timeout_message(*work, elapsed, timeout_));
    }
    lock.lock();
  }
}

}  // namespace zt
