#include "comm/make_communicator.h"

#include <fmt/format.h>

#include "comm/mpi_communicator.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"
#if ZT_HAVE_CUDA
#include "comm/cuda/gpu_assignment.h"
#include "comm/cuda/nccl_communicator.h"
#endif

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
  require_available(device);
#if ZT_HAVE_CUDA
  GpuSharing sharing = find_shared_gpus(parent, device);
  if (sharing.shared) {
    log::info("comm.backend auto: {}, which NCCL refuses; using MPI with host staging for GPU buffers",
              sharing.detail);
    return CommBackend::mpi;
  }
  return CommBackend::nccl;
#else
  (void)parent;
  return CommBackend::mpi;  // unreachable: require_available refuses GPUs in a CPU-only build
#endif
}

std::unique_ptr<Communicator> make_communicator(const CommOptions& options, Device device, MPI_Comm parent,
                                                Watchdog::TimeoutHandler on_timeout) {
  require_mpi_ready();
  if (resolve_backend(options, device, parent) == CommBackend::mpi)
    return std::make_unique<MpiCommunicator>(parent, device, options, std::move(on_timeout));
#if ZT_HAVE_CUDA
  return std::make_unique<NcclCommunicator>(parent, device, options, std::move(on_timeout));
#else
  throw UserError("comm.backend nccl needs the CUDA backend, but this zerotrain was built without CUDA");
#endif
}

}  // namespace zt
