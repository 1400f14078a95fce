// A build without the CUDA backend has no CUDA compute context: asking for one is the error of
// core/no_cuda.cpp.
#include "core/device.h"
#include "models/compute_context.h"

namespace zt::models {

std::unique_ptr<ComputeContext> ComputeContext::cuda(int index, DType, bool) {
  require_available(Device::cuda(index));  // throws: this build has no CUDA backend
  return nullptr;
}

}  // namespace zt::models
