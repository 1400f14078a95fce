#include "core/cpu_stream.h"

#include <pthread.h>

#include <stdexcept>
#include <utility>

#include "core/cpu_contention.h"
#include "core/log.h"

namespace zt {

double Event::elapsed_ms_since(const Event& start) const {
  if (!state_ || !start.state_) throw std::logic_error("elapsed time between events that were never recorded");
  return state_->elapsed_ms_since(*start.state_);
}

void CpuEventState::complete(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    completed_ = true;
    error_ = std::move(error);
    time_ = std::chrono::steady_clock::now();
  }
  completed_cv_.notify_all();
}

bool CpuEventState::query() {
  std::lock_guard lock(mutex_);
  return completed_;
}

std::exception_ptr CpuEventState::wait_completed() {
  std::unique_lock lock(mutex_);
  completed_cv_.wait(lock, [&] { return completed_; });
  return error_;
}

void CpuEventState::synchronize() {
  if (std::exception_ptr error = wait_completed()) std::rethrow_exception(error);
}

double CpuEventState::elapsed_ms_since(detail::EventState& start) {
  CpuEventState* cpu_start = as_cpu_event(&start);
  if (!cpu_start) throw std::logic_error("elapsed time between a CPU event and an event of another device");
  wait_completed();
  cpu_start->wait_completed();
  return std::chrono::duration<double, std::milli>(time_ - cpu_start->time_).count();
}

std::chrono::steady_clock::time_point CpuEventState::completed_at() {
  wait_completed();
  std::lock_guard lock(mutex_);
  return time_;
}

CpuStream::CpuStream(Mode mode, std::string name, std::function<void()> worker_setup)
    : mode_(mode), name_(std::move(name)) {
  if (mode_ != Mode::worker_thread) return;
  worker_ = std::thread([this, setup = std::move(worker_setup)] {
    worker_tid_.store(current_thread_id());
    if (setup) setup();
    worker_loop();
  });
  // The worker is joined only in the destructor, so its clock stays valid as long as the stream.
  has_worker_clock_ = pthread_getcpuclockid(worker_.native_handle(), &worker_clock_) == 0;
}

CpuStream::~CpuStream() {
  if (mode_ != Mode::worker_thread) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  worker_.join();
  if (error_) {
    try {
      std::rethrow_exception(error_);
    } catch (const std::exception& e) {
      log::debug("stream '{}' closed with an error that was already reported: {}", name_, e.what());
    }
  }
}

void CpuStream::enqueue(std::function<void()> work) { submit({std::move(work), nullptr, nullptr}); }

Event CpuStream::record() {
  auto state = std::make_shared<CpuEventState>();
  submit({nullptr, state, nullptr});
  return Event(state);
}

void CpuStream::wait(const Event& event) {
  if (!event.state()) return;  // never recorded: already complete
  submit({nullptr, nullptr, event.state()});
}

void CpuStream::synchronize() {
  Event done = record();
  done.synchronize();
}

double CpuStream::worker_cpu_time_ms() const { return has_worker_clock_ ? cpu_clock_ms(worker_clock_) : 0.0; }

std::optional<double> CpuStream::worker_run_queue_wait_ms() const {
  const pid_t tid = worker_tid_.load();
  if (tid == 0) return std::nullopt;
  return thread_run_queue_wait_ms(tid);
}

void CpuStream::submit(Task task) {
  if (mode_ == Mode::inline_on_caller) {
    run(task);
    if (error_) {
      // The caller's own work failed: surface it now and leave the stream usable, as for any
      // exception thrown on the calling thread.
      std::exception_ptr error = std::exchange(error_, nullptr);
      std::rethrow_exception(error);
    }
    return;
  }
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  queue_cv_.notify_one();
}

void CpuStream::run(Task& task) {
  if (task.awaits) {
    try {
      task.awaits->synchronize();
    } catch (...) {
      if (!error_) error_ = std::current_exception();
    }
  }
  if (task.work && !error_) {
    try {
      task.work();
    } catch (...) {
      error_ = std::current_exception();
    }
  }
  if (task.completes) task.completes->complete(error_);
}

void CpuStream::worker_loop() {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mutex_);
      queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything enqueued has run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    run(task);
  }
}

CpuStream& as_cpu_stream(Stream& stream, std::string_view work) {
  if (!stream.device().is_cpu())
    throw std::invalid_argument(std::string(work) + " was given a stream of " + stream.device().str());
  return static_cast<CpuStream&>(stream);
}

CpuEventState* as_cpu_event(detail::EventState* state) {
  return state && state->device().is_cpu() ? static_cast<CpuEventState*>(state) : nullptr;
}

}  // namespace zt
