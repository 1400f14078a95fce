#include "comm/make_communicator.h"

#include <fmt/format.h>

#include "comm/gpu_assignment.h"
#include "comm/mpi_communicator.h"
#include "core/error.h"
#include "core/log.h"

namespace zt {

CommBackend resolve_backend(const CommOptions& options, Device device, MPI_Comm parent) {
  switch (options.backend) {
    case CommBackend::mpi: return CommBackend::mpi;
    case CommBackend::nccl:
      if (device.is_cpu())
        throw UserError("comm.backend nccl needs GPU buffers, but the device is cpu (use mpi or auto)");
      if (!cuda_built())
        throw UserError("comm.backend nccl needs the CUDA backend, but this zerotrain was built without CUDA");
      return CommBackend::nccl;
    case CommBackend::auto_select: break;
  }
  if (device.is_cpu()) return CommBackend::mpi;
  require_available(device);  // throws in a build without CUDA
  GpuSharing sharing = find_shared_gpus(parent, device);
  if (sharing.shared) {
    log::info("comm.backend auto: {}, which NCCL refuses; using MPI with host staging for GPU buffers",
              sharing.detail);
    return CommBackend::mpi;
  }
  return CommBackend::nccl;
}

std::unique_ptr<Communicator> make_communicator(const CommOptions& options, Device device, MPI_Comm parent,
                                                Watchdog::TimeoutHandler on_timeout) {
  require_mpi_ready();
  if (resolve_backend(options, device, parent) == CommBackend::mpi)
    return std::make_unique<MpiCommunicator>(parent, device, options, std::move(on_timeout));
  return make_nccl_communicator(parent, device, options, std::move(on_timeout));
}

}  // namespace zt
