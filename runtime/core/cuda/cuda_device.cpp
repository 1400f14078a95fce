// The device functions of a build with the CUDA backend.
#include <cuda_runtime.h>

#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/device.h"

namespace zt {

bool cuda_built() { return true; }

int cuda_device_count() {
  int count = 0;
  // No driver or no GPU is an answer (zero devices), not an error.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

void activate(Device device) {
  require_available(device);
  if (device.is_cuda()) ZT_CUDA_CHECK(cudaSetDevice(device.index));
}

}  // namespace zt
