// models/cuda/cudnn_attention.h in a CUDA build without the cuDNN frontend's headers
// (scripts/fetch-cudnn-frontend.sh could not fetch them): attention runs the flash kernels.
#include <mutex>

#include "core/log.h"
#include "models/cuda/cudnn_attention.h"

namespace zt::models::cuda {

const CudnnLibrary& cudnn_library() {
  static const CudnnLibrary none{false, 0, "zerotrain was built without the cuDNN frontend's headers"};
  return none;
}

struct CudnnAttention::Graphs {};

CudnnAttention::CudnnAttention(int device, bool enabled) : device_(device), enabled_(enabled) {}
CudnnAttention::~CudnnAttention() = default;

bool CudnnAttention::forward(const FlashAttention&, DType, const void*, const void*, const void*, void*, float*,
                             cudaStream_t) {
  static std::once_flag said;
  if (enabled_)
    std::call_once(said, [] { log::info("attention: {}; the flash kernels run", cudnn_library().why_not); });
  return false;
}

bool CudnnAttention::backward(const FlashAttention&, DType, const void*, const void*, const void*, const void*,
                              const void*, const float*, void*, void*, void*, cudaStream_t) {
  return false;
}

}  // namespace zt::models::cuda
