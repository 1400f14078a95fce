// A build without the CUDA backend has no CUDA optimizer: asking for it is the error of
// core/no_cuda.cpp.
#include <stdexcept>

#include "core/device_ops.h"
#include "optim/optimizer_ops.h"

namespace zt {

OptimizerOps& cuda_optimizer_ops() {
  cuda_device_ops();  // throws: this build has no CUDA backend
  throw std::logic_error("unreachable: CUDA device ops in a build without CUDA");
}

}  // namespace zt
