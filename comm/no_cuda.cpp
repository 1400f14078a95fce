// A build without the CUDA backend has no NCCL and no GPU to share: a GPU device is refused first,
// with the error of core/no_cuda.cpp.
#include <stdexcept>

#include "comm/gpu_assignment.h"
#include "comm/make_communicator.h"
#include "core/device_ops.h"

namespace zt {

GpuSharing find_shared_gpus(MPI_Comm, Device device) {
  require_available(device);  // throws: this build has no CUDA backend
  throw std::logic_error("unreachable: GPU sharing check in a build without CUDA");
}

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm, Device device, const CommOptions&,
                                                     Watchdog::TimeoutHandler) {
  cuda_device_ops();  // throws: this build has no CUDA backend
  throw std::logic_error("unreachable: NCCL in a build without CUDA (" + device.str() + ")");
}

}  // namespace zt
