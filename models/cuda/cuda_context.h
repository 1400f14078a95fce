// The CUDA compute context: a CudaStream, a cuBLAS handle bound to it, a cuBLAS workspace, and
// the attention's cuDNN graphs.
// Only for translation units built with the CUDA backend.
#pragma once

#include <cublas_v2.h>

#include "core/buffer.h"
#include "core/cuda/cuda_stream.h"
#include "models/cuda/cudnn_attention.h"
#include "models/compute_context.h"

namespace zt::models {

class CudaComputeContext final : public ComputeContext {
 public:
  // cudnn_attention: attention on cuDNN where it loads (train.cudnn_attention), else the flash kernels.
  CudaComputeContext(int index, DType dtype, bool allow_tf32, bool cudnn_attention = true);
  ~CudaComputeContext() override;
  CudaComputeContext(const CudaComputeContext&) = delete;
  CudaComputeContext& operator=(const CudaComputeContext&) = delete;

  Device device() const override { return Device::cuda(index_); }
  DType dtype() const override { return dtype_; }
  Stream& stream() override { return stream_; }
  cudaStream_t handle() const { return stream_.handle(); }
  cublasHandle_t cublas() const { return cublas_; }
  // fp32 matrix products may run on TF32 tensor cores (cublasLt's FAST_TF32 compute type).
  bool allow_tf32() const { return allow_tf32_; }
  // fp32 scratch of at least `floats` elements for multi-pass reductions; grows (once, outside the
  // steady state) and is reused by every kernel on this stream.
  float* reduction_scratch(std::size_t floats);
  cuda::CudnnAttention& cudnn_attention() { return cudnn_attention_; }

 private:
  int index_;
  DType dtype_;
  bool allow_tf32_;
  CudaStream stream_;
  cublasHandle_t cublas_ = nullptr;
  Buffer workspace_;
  Buffer reduction_scratch_;
  cuda::CudnnAttention cudnn_attention_;
};

// The CUDA context behind ctx; throws std::logic_error when ctx is not a CUDA context.
CudaComputeContext& as_cuda(ComputeContext& ctx);

// The f32 elements of a device view (statistics, losses), for a kernel's float* argument.
inline float* float_data(const BufferView& v) { return static_cast<float*>(v.data); }

}  // namespace zt::models
