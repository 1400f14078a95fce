#include "comm/work.h"

#include <fmt/format.h>

#include "core/cpu_stream.h"
#include "core/log.h"

namespace zt {
namespace detail {

namespace {
std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void WorkState::mark_started() {
  std::int64_t expected = 0;
  started_ns_.compare_exchange_strong(expected, now_ns());
}

bool WorkState::started() {
  if (started_ns_.load() != 0) return true;
  if (started_event.state()) {
    bool reached = false;
    try {
      reached = started_event.query();
    } catch (...) {
      reached = true;  // a failed stream: the error surfaces through done; the clock may run
    }
    if (reached) {
      mark_started();
      return true;
    }
  }
  return false;
}

std::chrono::steady_clock::time_point WorkState::started_at() const {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(started_ns_.load()));
}

std::string WorkState::where() const {
  return fmt::format("{} on rank {} of {} ({} communicator '{}')", desc.str(), rank, world_size, backend, comm_name);
}

}  // namespace detail

const CollectiveDesc& Work::description() const {
  static const CollectiveDesc empty{};
  return state_ ? state_->desc : empty;
}

namespace {

std::atomic<int> blocked_waiters{0};

// Counts the calling thread in threads_waiting_for_collectives() while it exists.
class BlockedWaiter {
 public:
  BlockedWaiter() { blocked_waiters.fetch_add(1, std::memory_order_relaxed); }
  ~BlockedWaiter() { blocked_waiters.fetch_sub(1, std::memory_order_relaxed); }
  BlockedWaiter(const BlockedWaiter&) = delete;
  BlockedWaiter& operator=(const BlockedWaiter&) = delete;
};

}  // namespace

int threads_waiting_for_collectives() { return blocked_waiters.load(std::memory_order_relaxed); }

void Work::wait() const {
  if (!state_) return;
  if (is_completed()) return state_->done.synchronize();  // rethrows its error, if any
  BlockedWaiter waiting;
  state_->done.synchronize();
}

// A CPU stream (the host) blocks here until the collective completes; a GPU stream returns at
// once, so counting it as a waiter costs the comm thread one sleep at most.
void Work::wait(Stream& stream) const {
  if (!state_) return;
  if (is_completed()) return stream.wait(state_->done);
  BlockedWaiter waiting;
  stream.wait(state_->done);
}

bool Work::is_completed() const { return !state_ || state_->done.query(); }

std::exception_ptr Work::error() const {
  if (!state_ || !state_->done.query()) return nullptr;
  try {
    state_->done.synchronize();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

double Work::duration_ms() const {
  if (!state_ || !is_completed()) return 0.0;
  if (state_->started_event.state()) return state_->done.elapsed_ms_since(state_->started_event);
  CpuEventState* cpu_done = as_cpu_event(state_->done);
  if (!cpu_done || !state_->started()) return 0.0;
  return std::chrono::duration<double, std::milli>(cpu_done->completed_at() - state_->started_at()).count();
}

const Event& Work::event() const {
  static const Event never_recorded{};
  return state_ ? state_->done : never_recorded;
}

const Event& Work::started_event() const {
  static const Event never_recorded{};
  return state_ ? state_->started_event : never_recorded;
}

std::optional<std::chrono::steady_clock::time_point> Work::started_at() const {
  if (!state_ || state_->started_event.state() || !state_->started()) return std::nullopt;
  return state_->started_at();
}

void wait_before_freeing(const Work& work) noexcept {
  try {
    work.wait();
  } catch (const std::exception& e) {
    log::error("while shutting down: {}", e.what());
  } catch (...) {
    log::error("while shutting down: a collective failed with an unknown error");
  }
}

}  // namespace zt
