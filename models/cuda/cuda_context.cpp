#include "models/cuda/cuda_context.h"

#include <stdexcept>

#include "core/cuda/cuda_check.h"

namespace zt::models {

namespace {
// cuBLAS's recommended workspace on Hopper; also plenty for Ampere.
constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;
}  // namespace

CudaComputeContext::CudaComputeContext(int index, DType dtype, CudaOptions options)
    : index_((activate(Device::cuda(index)), index)),
      dtype_(dtype),
      options_(options),
      stream_(index, CudaStream::Priority::normal),
      workspace_(Device::cuda(index), DType::f32, kCublasWorkspaceBytes / 4, MemCategory::workspace),
      cudnn_attention_(index, options.cudnn_attention) {
  ZT_CUBLAS_CHECK(cublasCreate(&cublas_));
  ZT_CUBLAS_CHECK(cublasSetStream(cublas_, stream_.handle()));
  ZT_CUBLAS_CHECK(cublasSetWorkspace(cublas_, workspace_.data(), kCublasWorkspaceBytes));
  // TF32 only when asked for (precision.tf32): fp32 runs that compare with the CPU reference
  // turn it off.
  ZT_CUBLAS_CHECK(cublasSetMathMode(cublas_, options.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  ZT_CUBLAS_CHECK(cublasLtCreate(&cublas_lt_));
}

CudaComputeContext::~CudaComputeContext() {
  if (cublas_lt_) cublasLtDestroy(cublas_lt_);
  if (cublas_) cublasDestroy(cublas_);
}

float* CudaComputeContext::reduction_scratch(std::size_t floats) {
  if (reduction_scratch_.numel() < floats) {
    stream_.synchronize();  // the old scratch may still be in use by queued kernels
    reduction_scratch_ = Buffer(device(), DType::f32, floats, MemCategory::workspace);
  }
  return reduction_scratch_.data_as<float>();
}

CudaComputeContext& as_cuda(ComputeContext& ctx) {
  if (!ctx.device().is_cuda()) throw std::logic_error("a CUDA kernel was given a non-CUDA compute context");
  return static_cast<CudaComputeContext&>(ctx);  // the one context on a CUDA device
}

std::unique_ptr<ComputeContext> ComputeContext::cuda(int index, DType dtype, CudaOptions options) {
  require_available(Device::cuda(index));
  return std::make_unique<CudaComputeContext>(index, dtype, options);
}

}  // namespace zt::models
