// The CUDA compute context: a CudaStream, cuBLAS and cuBLASLt handles and their workspace, and
// the attention's cuDNN graphs.
// Only for translation units built with the CUDA backend.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include "core/buffer.h"
#include "core/cuda/cuda_stream.h"
#include "models/cuda/cudnn_attention.h"
#include "models/compute_context.h"

namespace zt::models {

class CudaComputeContext final : public ComputeContext {
 public:
  CudaComputeContext(int index, DType dtype, CudaOptions options = {});
  ~CudaComputeContext() override;
  CudaComputeContext(const CudaComputeContext&) = delete;
  CudaComputeContext& operator=(const CudaComputeContext&) = delete;

  Device device() const override { return Device::cuda(index_); }
  DType dtype() const override { return dtype_; }
  Stream& stream() override { return stream_; }
  cudaStream_t handle() const { return stream_.handle(); }
  cublasHandle_t cublas() const { return cublas_; }
  // cuBLASLt, for the products with epilogues; shares cuBLAS's workspace (one stream runs both).
  cublasLtHandle_t cublas_lt() const { return cublas_lt_; }
  void* gemm_workspace() const { return workspace_.data(); }
  std::size_t gemm_workspace_bytes() const { return workspace_.bytes(); }
  // fp32 matrix products may run on TF32 tensor cores (cublasLt's FAST_TF32 compute type).
  bool allow_tf32() const { return options_.allow_tf32; }
  bool gemm_epilogues() const { return options_.gemm_epilogues; }
  // Products that ran with a cuBLASLt epilogue so far (what the tests and benchmarks check).
  std::size_t epilogue_products() const { return epilogue_products_; }
  void count_epilogue_product() { ++epilogue_products_; }
  // fp32 scratch of at least `floats` elements for multi-pass reductions; grows (once, outside the
  // steady state) and is reused by every kernel on this stream.
  float* reduction_scratch(std::size_t floats);
  cuda::CudnnAttention& cudnn_attention() { return cudnn_attention_; }

 private:
  int index_;
  DType dtype_;
  CudaOptions options_;
  CudaStream stream_;
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t cublas_lt_ = nullptr;
  Buffer workspace_;
  Buffer reduction_scratch_;
  cuda::CudnnAttention cudnn_attention_;
  std::size_t epilogue_products_ = 0;
};

// The CUDA context behind ctx; throws std::logic_error when ctx is not a CUDA context.
CudaComputeContext& as_cuda(ComputeContext& ctx);

// The f32 elements of a device view (statistics, losses), for a kernel's float* argument.
inline float* float_data(const BufferView& v) { return static_cast<float*>(v.data); }

}  // namespace zt::models
