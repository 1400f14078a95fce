// The handle of one asynchronous collective.
//
// Every collective is enqueued on the communicator's comm stream and returns at once with a Work.
// The Work completes when the collective's result is in the output buffer (including any copy
// back from host staging). Errors are those of the comm stream: sticky, carried by the Work's
// event and rethrown by wait().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "comm/collective.h"
#include "core/stream.h"

namespace zt {

// A collective that failed: the message names the collective, the rank and the communicator,
// then the cause.
class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

// Shared by the Work handle, the comm stream's task and the watchdog.
struct WorkState {
  CollectiveDesc desc;
  int rank = 0;
  int world_size = 1;
  std::string comm_name;
  std::string backend;
  Event done;           // recorded on the comm stream right after the collective
  Event started_event;  // GPU backends: recorded on the comm stream right before the collective

  // The watchdog's clock starts when the collective starts running, not when it is enqueued:
  // waiting for the producer (a long backward pass) is not a hang.
  void mark_started();
  // Started? Observes started_event for GPU backends (the time is then when it was first seen).
  bool started();
  std::chrono::steady_clock::time_point started_at() const;
  // "all_reduce(sum) #7: 1048576 x f32 (4.00 MiB) on rank 1 of 4 (mpi communicator 'world')"
  std::string where() const;

 private:
  std::atomic<std::int64_t> started_ns_{0};  // steady_clock since epoch; 0 = not started
};

}  // namespace detail

// How many threads are blocked right now in Work::wait for a collective that has not completed.
// While one is, the MPI comm thread tests its running collective without sleeping in between (it
// yields the core instead, should anything else want to run): the compute the sleeps leave room
// for is not happening, and a sleeping poll would only slow the transfer being waited for.
int threads_waiting_for_collectives();

class Work {
 public:
  Work() = default;  // an empty handle: complete, no error
  explicit Work(std::shared_ptr<detail::WorkState> state) : state_(std::move(state)) {}

  // 1, 2, ... in the order collectives were issued on the communicator; 0 for an empty handle.
  std::uint64_t sequence() const { return state_ ? state_->desc.sequence : 0; }
  const CollectiveDesc& description() const;
  // The host blocks until the collective completed; rethrows its error.
  void wait() const;
  // Work enqueued on stream after this call runs only after the collective completed; the host
  // does not block (see CudaStream::wait for the one exception: a CUDA stream waiting on a CPU
  // comm stream's event, as with staged MPI on a GPU, blocks the host).
  void wait(Stream& stream) const;
  bool is_completed() const;
  // The collective's error once it completed with one; null while running or after success.
  std::exception_ptr error() const;
  // How long the collective ran on the comm stream, from its start (after the producer's event)
  // to its completion; 0 while it has not completed.
  double duration_ms() const;
  // Completion event on the comm stream (for timing and for waiting without a Work).
  const Event& event() const;
  // For timelines. GPU backends: the event recorded on the comm stream right before the
  // collective (never recorded otherwise). CPU comm streams (MPI, also with host-staged GPU
  // buffers): the host time the collective started running; nullopt before that, or when the start
  // is a device event.
  const Event& started_event() const;
  std::optional<std::chrono::steady_clock::time_point> started_at() const;

 private:
  std::shared_ptr<detail::WorkState> state_;
};

// For destructors of what owns a collective's buffers: waits until the collective no longer
// writes into them; a failure is logged (the error names the collective), never thrown.
void wait_before_freeing(const Work& work) noexcept;

}  // namespace zt
