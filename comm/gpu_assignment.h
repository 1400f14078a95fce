// Which GPU each rank of a host drives. NCCL refuses two ranks of one communicator on the same GPU,
// so the NCCL backend checks it up front and says which ranks collide, and the auto backend falls
// back to MPI with host staging when they do (several ranks sharing a single-GPU machine).
#pragma once

#include <mpi.h>

#include <string>

#include "core/device.h"

namespace zt {

struct GpuSharing {
  bool shared = false;  // on any host of comm, two ranks use the same physical GPU
  std::string detail;   // "ranks 0 and 1 both use GPU 0000:3b:00.0 on host X" (first collision seen by this rank)
};

// Collective over comm; every rank gets the same `shared`. Identifies GPUs by PCI bus id, so
// ranks with different CUDA_VISIBLE_DEVICES are compared correctly. (comm/cuda/; a build without
// CUDA refuses GPU devices before this could be called.)
GpuSharing find_shared_gpus(MPI_Comm comm, Device device);

}  // namespace zt
