// Streams and events with CUDA semantics on every device.
//
// A Stream is an ordered queue of work; an Event is a completion point recorded on a stream that
// another stream (without blocking the host) or the host itself can wait on. On the GPU these are
// CUDA streams and events. On the CPU (cpu_stream.h) a stream is either the calling thread itself
// (the compute stream: work runs when enqueued) or a queue served by one worker thread (the comm
// stream), which is what lets communication overlap computation on CPUs.
//
// Each device kind has one stream type and one event type (CpuStream/CpuEventState,
// CudaStream/CudaEventState), made only by its own code: a stream or event on the CPU is always the
// CPU's, so the device's code reaches its concrete type by the device (cpu_stream.h, cuda_stream.h)
// and never has to test which kind of stream it was handed.
//
// Errors are sticky, as in CUDA: once a task on a stream fails, later work on it is skipped,
// every event recorded after the failure carries the error, a stream that waits on such an event
// inherits it, and synchronize() / Event::synchronize() rethrow it. An error never vanishes.
#pragma once

#include <chrono>
#include <memory>

#include "core/device.h"

namespace zt {

namespace detail {
class EventState {
 public:
  virtual ~EventState() = default;
  virtual Device device() const = 0;
  virtual bool query() = 0;        // completed (successfully or not)?
  virtual void synchronize() = 0;  // host blocks until completed; rethrows the carried error
  virtual double elapsed_ms_since(EventState& start) = 0;
};
}  // namespace detail

class Event {
 public:
  Event() = default;
  explicit Event(std::shared_ptr<detail::EventState> state) : state_(std::move(state)) {}

  // An event that was never recorded counts as complete, like a fresh cudaEvent_t.
  bool query() const { return !state_ || state_->query(); }
  void synchronize() const {
    if (state_) state_->synchronize();
  }
  // Milliseconds from start to this event; both must be complete and of the same device kind.
  double elapsed_ms_since(const Event& start) const;
  const std::shared_ptr<detail::EventState>& state() const { return state_; }

 private:
  std::shared_ptr<detail::EventState> state_;
};

class Stream {
 public:
  virtual ~Stream() = default;
  virtual Device device() const = 0;
  // An event that completes when all work enqueued so far has completed.
  virtual Event record() = 0;
  // Work enqueued after this call starts only once event has completed. The host does not block
  // (except on an inline CPU stream, whose work runs on the calling thread anyway).
  virtual void wait(const Event& event) = 0;
  // The host blocks until all enqueued work has completed; rethrows the stream's error.
  virtual void synchronize() = 0;
};

}  // namespace zt
