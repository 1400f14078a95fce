// A build without the CUDA backend: the one place that says so.
#include "core/device_ops.h"
#include "core/error.h"

namespace zt {

bool cuda_built() { return false; }

DeviceOps& cuda_device_ops() {
  throw UserError("a CUDA device was asked for, but this zerotrain was built without CUDA (ZT_CUDA=OFF or no nvcc "
                  "at build time); use device cpu, or rebuild with the CUDA toolkit installed");
}

}  // namespace zt
