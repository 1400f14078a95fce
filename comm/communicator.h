// The Communicator interface: the collectives of data-parallel training, with the same call
// sites for CPU (MPI) and GPU (NCCL, or MPI with host staging) buffers.
//
// Every collective is asynchronous. The call validates its arguments (throwing
// std::invalid_argument at once on a mistake), numbers the collective, makes the comm stream wait
// for everything enqueued so far on `producer` (the stream that wrote the input), enqueues the
// collective on the comm stream and returns a Work. The caller must keep the buffers alive and
// leave them alone until the Work completed. Every rank of the communicator must issue the same
// collectives in the same order; collectives of one communicator are issued from one thread at a
// time. A collective that does not complete within CommOptions::timeout ends the process (see
// watchdog.h).
//
// Semantics (identical on every backend unless noted):
// - all_reduce(in, out): out[i] = reduce over ranks of in[i]; in and out have the same size.
//   In place when in and out are the same view.
// - reduce_scatter(in, out): in holds world_size equal chunks of out.numel elements; rank r gets
//   the reduction of chunk r. An input whose size is not world_size * out.numel is rejected.
//   In place when out is this rank's chunk of in (as NCCL defines it); the other chunks of in are
//   left unchanged.
// - all_gather(in, out): out is world_size chunks of in.numel elements, chunk r from rank r.
//   In place when in is this rank's chunk of out.
// - all_gather(in, chunks): the same into world_size separate views of in.numel elements, chunk r
//   from rank r, wherever they lie (a part of every rank's chunk of a larger buffer, at a stride).
//   In place when in is chunks[rank]. The chunks must not overlap each other.
// - broadcast(in, out, root): out <- root's in on every rank (in is read on the root only).
//   In place when in and out are the same view.
// - barrier(): completes when every rank reached it.
// - dtypes f32, bf16, f16. sum adds; avg is the sum divided by world_size. Rounding of bf16/f16:
//   MPI rounds each pairwise fp32 sum to the 16-bit type, then divides in fp32 and rounds once
//   more for avg (reduction_ops.h); NCCL sums with its own per-step rounding and implements avg
//   as a pre-multiplication of the inputs by 1/world_size. For a power-of-two world size and
//   values whose sums are exact in the 16-bit type, both backends agree bit for bit.
// - Errors: a failed collective fails its Work (wait() rethrows a CommError naming the collective,
//   the rank and the communicator) and every later one on the same comm stream (sticky). With
//   CommOptions::debug_check, a disagreement between ranks is such an error on MPI; on NCCL the
//   check runs at the call, which then throws it directly.
// - Sizes may be 0. A partial overlap of in and out (anything but the in-place layouts above) is
//   rejected.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/collective.h"
#include "comm/comm_options.h"
#include "comm/mpi_bootstrap.h"
#include "comm/work.h"
#include "core/buffer.h"
#include "core/stream.h"

namespace zt {

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return launch_.rank; }
  int world_size() const { return launch_.world_size; }
  int local_rank() const { return launch_.local_rank; }  // among this communicator's ranks on this host
  int local_size() const { return launch_.local_size; }
  // Ranks per host when every host holds that many, placed host by host; else 0 (LaunchInfo).
  int ranks_per_host_block() const { return launch_.ranks_per_host_block; }
  const std::string& name() const { return options_.name; }
  const CommOptions& options() const { return options_; }
  virtual std::string_view backend_name() const = 0;
  // The device whose buffers the collectives take.
  virtual Device device() const = 0;
  // The stream collectives run on (a worker-thread CpuStream for MPI, a high-priority CUDA stream
  // for NCCL).
  virtual Stream& comm_stream() = 0;
  // CPU time consumed so far by the host thread that runs this communicator's collectives, in ms
  // (the MPI comm thread); 0 where no host thread runs them (NCCL). Sampled around a step, it shows
  // what communication costs the compute thread on a rank with few cores.
  virtual double cpu_time_ms() const { return 0.0; }
  // How long that thread has waited for a CPU while ready to run, in ms (cpu_contention.h); 0 where
  // no host thread runs the collectives, nullopt where the kernel does not publish it.
  virtual std::optional<double> cpu_wait_ms() const { return 0.0; }
  // Sizes this backend's host workspaces (staging for GPU buffers, the reduce-scatter ring's
  // partial sums) for a collective of `kind` over `numel` elements of `dtype` (the larger side:
  // all-reduce's buffer, reduce-scatter's input, all-gather's output), so that collectives up to
  // that size never grow them mid-step on the comm thread, where freeing and allocating pinned
  // memory synchronises the GPU. Ordered on the comm stream, and returns when it is done. The
  // engine calls it at start-up for its largest collectives.
  virtual void reserve_workspace(CollectiveKind kind, DType dtype, std::size_t numel) {
    (void)kind, (void)dtype, (void)numel;
  }
  // Bytes those workspaces hold (0 for a backend without them). Read it between collectives.
  virtual std::size_t workspace_bytes() const { return 0; }
  // Sequence number the next collective will get.
  std::uint64_t next_sequence() const;

  Work all_reduce(BufferView in, BufferView out, ReduceOp op, Stream& producer);
  Work all_reduce(BufferView data, ReduceOp op, Stream& producer) { return all_reduce(data, data, op, producer); }
  // Several in-place all-reduces launched as one (one NCCL group): one Work, one sequence number.
  Work all_reduce_many(std::span<const BufferView> tensors, ReduceOp op, Stream& producer);
  Work reduce_scatter(BufferView in, BufferView out, ReduceOp op, Stream& producer);
  Work all_gather(BufferView in, BufferView out, Stream& producer);
  Work all_gather(BufferView in, std::span<const BufferView> chunks, Stream& producer);
  // The chunk form's argument checks (std::invalid_argument on a mistake), for algorithms built on
  // several collectives that must refuse before issuing any; true when in is chunks[rank()].
  bool check_all_gather(BufferView in, std::span<const BufferView> chunks) const;
  Work broadcast(BufferView in, BufferView out, int root, Stream& producer);
  Work broadcast(BufferView data, int root, Stream& producer) { return broadcast(data, data, root, producer); }
  Work barrier(Stream& producer);

  // A communicator over the ranks that pass the same color, ordered by key (MPI_Comm_split), with
  // the same backend, device and options. Collective over this communicator; ordered after the
  // collectives already issued on it. A negative color takes no part and gets nullptr.
  virtual std::unique_ptr<Communicator> split(int color, int key, std::string name) = 0;

 protected:
  Communicator(LaunchInfo launch, CommOptions options) : launch_(launch), options_(std::move(options)) {}

  // A validated, numbered collective. For all_reduce_many, in/out hold one view per tensor; for
  // all_gather, in holds one view and out world_size chunks of its size, in rank order (contiguous
  // for the one-buffer form); otherwise exactly one each (empty for barrier).
  struct Collective {
    CollectiveDesc desc;
    std::vector<BufferView> in;
    std::vector<BufferView> out;
    bool in_place = false;
  };
  virtual Work launch(Collective collective, Stream& producer) = 0;

  // The shared state of the Work of c, filled with what the watchdog and errors report.
  std::shared_ptr<detail::WorkState> new_work_state(const Collective& c) const;

 private:
  Work number_and_launch(Collective collective, Stream& producer);
  void check_view(const BufferView& view, std::string_view role, CollectiveKind kind) const;

  LaunchInfo launch_;
  CommOptions options_;
  mutable std::mutex sequence_mutex_;
  std::uint64_t next_sequence_ = 1;
};

// Views that may be passed as in/out of one collective: the same view, or no shared byte.
// Otherwise the in-place layout asked for must hold. Exposed for the backends' own checks.
bool views_overlap(const BufferView& a, const BufferView& b);

}  // namespace zt
