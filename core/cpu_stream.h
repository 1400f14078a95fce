// CPU streams and events (see stream.h for the semantics they share with CUDA).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "core/stream.h"

namespace zt {

// A completion point on the CPU: set once, with the time it completed and the error (if any)
// of the stream that completed it.
class CpuEventState final : public detail::EventState {
 public:
  Device device() const override { return Device::cpu(); }
  void complete(std::exception_ptr error);
  bool query() override;
  void synchronize() override;
  // Blocks until completed; returns the carried error instead of throwing it.
  std::exception_ptr wait_completed();
  double elapsed_ms_since(detail::EventState& start) override;
  // When it completed; blocks until then.
  std::chrono::steady_clock::time_point completed_at();

 private:
  std::mutex mutex_;
  std::condition_variable completed_cv_;
  bool completed_ = false;
  std::exception_ptr error_;
  std::chrono::steady_clock::time_point time_;
};

class CpuStream final : public Stream {
 public:
  enum class Mode {
    inline_on_caller,  // work runs on the calling thread when enqueued; exceptions propagate at once
    worker_thread,     // work runs in FIFO order on this stream's own thread
  };

  // worker_setup runs first on the worker thread (a GPU rank's comm worker makes its device
  // current there, or its first CUDA call would create a context on GPU 0).
  explicit CpuStream(Mode mode, std::string name = "cpu-stream", std::function<void()> worker_setup = {});
  ~CpuStream() override;  // finishes all enqueued work, then stops the worker
  CpuStream(const CpuStream&) = delete;
  CpuStream& operator=(const CpuStream&) = delete;

  Device device() const override { return Device::cpu(); }
  Mode mode() const { return mode_; }
  const std::string& name() const { return name_; }

  void enqueue(std::function<void()> work);
  Event record() override;
  void wait(const Event& event) override;
  void synchronize() override;

  // CPU time the worker thread has consumed so far, in ms (its thread CPU clock), so that callers
  // can see what serving this stream costs the other threads of the process; 0 for an inline
  // stream, whose work is charged to its callers.
  double worker_cpu_time_ms() const;
  // The worker thread's run-queue wait so far, in ms (cpu_contention.h); nullopt for an inline
  // stream or where the kernel does not publish it.
  std::optional<double> worker_run_queue_wait_ms() const;

 private:
  struct Task {
    std::function<void()> work;                  // skipped once the stream has failed
    std::shared_ptr<CpuEventState> completes;    // completed with the stream's error, if any
    std::shared_ptr<detail::EventState> awaits;  // blocks the stream until it completes
  };
  void submit(Task task);
  void run(Task& task);
  void worker_loop();

  const Mode mode_;
  const std::string name_;
  std::exception_ptr error_;  // touched only by the thread that runs tasks

  std::mutex mutex_;
  std::condition_variable queue_cv_;
  std::deque<Task> queue_;
  bool stopping_ = false;
  std::thread worker_;
  clockid_t worker_clock_{};  // the worker's CPU-time clock (pthread_getcpuclockid)
  bool has_worker_clock_ = false;
  std::atomic<pid_t> worker_tid_{0};  // set by the worker as it starts
};

// The CPU's own types behind the interfaces (stream.h: every CPU stream and event is one of these).
// as_cpu_stream throws std::invalid_argument naming `work` for another device's stream;
// as_cpu_event gives nullptr for another device's event or one never recorded.
CpuStream& as_cpu_stream(Stream& stream, std::string_view work);
CpuEventState* as_cpu_event(detail::EventState* state);
inline CpuEventState* as_cpu_event(const Event& event) { return as_cpu_event(event.state().get()); }

}  // namespace zt
