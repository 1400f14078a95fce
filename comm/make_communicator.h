// Chooses the backend for a device (comm.backend) and builds the communicator.
#pragma once

#include <mpi.h>

#include <memory>

#include "comm/communicator.h"
#include "comm/watchdog.h"

namespace zt {

// The backend that `options.backend` resolves to for buffers on device: auto picks MPI for CPU
// buffers and NCCL for GPU buffers unless two ranks share a GPU (then MPI with host staging).
// Collective over parent. Throws zt::UserError for nccl with CPU buffers or without CUDA.
CommBackend resolve_backend(const CommOptions& options, Device device, MPI_Comm parent);

// The NCCL backend (comm/cuda/nccl_communicator.cpp; in a build without CUDA, comm/no_cuda.cpp
// refuses it). Collective over parent.
std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm parent, Device device, const CommOptions& options,
                                                     Watchdog::TimeoutHandler on_timeout);

// Collective over parent (default: every rank of the job).
std::unique_ptr<Communicator> make_communicator(const CommOptions& options, Device device,
                                                MPI_Comm parent = MPI_COMM_WORLD,
                                                Watchdog::TimeoutHandler on_timeout = Watchdog::log_and_exit);

}  // namespace zt
