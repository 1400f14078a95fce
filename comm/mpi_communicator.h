// The MPI backend: CPU buffers, or GPU buffers staged through pinned host memory (so several ranks
// can share one GPU, which NCCL refuses), or passed to MPI directly when the library is CUDA-aware
// and the collective needs no host arithmetic.
//
// The comm stream is a worker-thread CpuStream: collectives run on it one at a time in issue order,
// each a non-blocking MPI collective on this communicator's own duplicate of the parent
// communicator, which the thread then tests and sleeps on (CommOptions::poll_interval,
// mpi_progress.h) instead of busy-polling in a blocking call. Only that thread touches the
// duplicate after construction, so MPI sees one ordered stream of collectives per communicator.
#pragma once

#include <memory>

#include "comm/communicator.h"
#include "comm/host_workspace.h"
#include "comm/mpi_handles.h"
#include "comm/reduction_ops.h"
#include "comm/watchdog.h"
#include "core/cpu_stream.h"

namespace zt {

// True when the MPI library can take device pointers (Open MPI's MPIX_Query_cuda_support).
bool mpi_is_cuda_aware();

class MpiCommunicator final : public Communicator {
 public:
  // Collective over parent, which is duplicated. device: cpu, or cuda:N for GPU buffers.
  MpiCommunicator(MPI_Comm parent, Device device, CommOptions options,
                  Watchdog::TimeoutHandler on_timeout = Watchdog::log_and_exit);
  ~MpiCommunicator() override;  // finishes the collectives already issued

  std::string_view backend_name() const override { return "mpi"; }
  Device device() const override { return device_; }
  Stream& comm_stream() override { return stream_; }
  double cpu_time_ms() const override { return stream_.worker_cpu_time_ms(); }
  std::optional<double> cpu_wait_ms() const override { return stream_.worker_run_queue_wait_ms(); }
  std::unique_ptr<Communicator> split(int color, int key, std::string name) override;
  void reserve_workspace(CollectiveKind kind, DType dtype, std::size_t numel) override;
  std::size_t workspace_bytes() const override { return staging_.capacity_bytes() + scratch_.capacity_bytes(); }

  // GPU buffers go to MPI without host staging (CUDA-aware MPI, no host arithmetic needed).
  bool passes_device_buffers_directly(const CollectiveDesc& desc) const;

 protected:
  Work launch(Collective collective, Stream& producer) override;

 private:
  void run(const Collective& c);                   // on the comm thread
  void run_staged(const Collective& c);            // GPU buffers through host memory
  void run_on_host_memory(CollectiveKind kind, ReduceOp op, const BufferView& in, const BufferView& out,
                          bool in_place, int root);

  Device device_;
  bool cuda_aware_ = false;
  Watchdog::TimeoutHandler on_timeout_;
  // Declaration order is destruction order reversed: the stream's thread stops first, while the
  // communicator, ops, workspaces and watchdog it uses are still alive.
  MpiComm comm_;
  MpiSumOps sum_ops_;
  Watchdog watchdog_;
  HostWorkspace staging_;
  HostWorkspace scratch_;
  CpuStream stream_;
};

}  // namespace zt
