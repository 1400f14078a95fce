// The NCCL backend: GPU buffers, one GPU per rank, collectives on a high-priority CUDA stream.
//
// The NCCL unique id is created on rank 0 and broadcast with MPI over this communicator's own
// duplicate of the parent, which also carries the debug consistency check and split(). Collectives
// are enqueued from the calling thread (NCCL launches are asynchronous); a multi-tensor launch is
// one NCCL group. The watchdog's clock for a collective starts when the comm stream reaches it
// (an event recorded just before the NCCL call).
#pragma once

#include <nccl.h>

#include <memory>

#include "comm/communicator.h"
#include "comm/mpi_handles.h"
#include "comm/watchdog.h"
#include "core/buffer.h"
#include "core/cuda/cuda_stream.h"

namespace zt {

// RAII for ncclComm_t: destroyed normally, or aborted when the communicator saw an error (a
// destroy would wait for work that will never finish).
class NcclComm {
 public:
  NcclComm() = default;
  explicit NcclComm(ncclComm_t comm) : comm_(comm) {}
  ~NcclComm();
  NcclComm(NcclComm&& other) noexcept;
  NcclComm& operator=(NcclComm&& other) noexcept;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ncclComm_t get() const { return comm_; }
  void mark_failed() { failed_ = true; }

 private:
  void reset() noexcept;
  ncclComm_t comm_ = nullptr;
  bool failed_ = false;
};

class NcclCommunicator final : public Communicator {
 public:
  // Collective over parent. Throws zt::UserError when two ranks of parent use the same GPU.
  NcclCommunicator(MPI_Comm parent, Device device, CommOptions options,
                   Watchdog::TimeoutHandler on_timeout = Watchdog::log_and_exit);
  ~NcclCommunicator() override;

  std::string_view backend_name() const override { return "nccl"; }
  Device device() const override { return device_; }
  Stream& comm_stream() override { return stream_; }
  std::unique_ptr<Communicator> split(int color, int key, std::string name) override;

 protected:
  Work launch(Collective collective, Stream& producer) override;

 private:
  void enqueue_nccl(const Collective& c);

  Device device_;
  Watchdog::TimeoutHandler on_timeout_;
  MpiComm mpi_;
  NcclComm nccl_;
  Watchdog watchdog_;
  CudaStream stream_;
  Buffer barrier_scratch_;  // one f32 on the device: a barrier is a 1-element all_reduce
};

}  // namespace zt
