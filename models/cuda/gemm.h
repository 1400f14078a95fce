// Row-major matrix products on the GPU through cuBLAS, fp32 accumulation for every storage dtype.
#pragma once

#include "models/cuda/cuda_context.h"

namespace zt::models::cuda {

// For each of `batch` problems (pointers advanced by the strides, in elements):
//   C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C, row-major with leading dims lda/ldb/ldc.
struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int M = 0, N = 0, K = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* A = nullptr;
  int lda = 0;
  long long stride_a = 0;
  const void* B = nullptr;
  int ldb = 0;
  long long stride_b = 0;
  void* C = nullptr;
  int ldc = 0;
  long long stride_c = 0;
  int batch = 1;
};
void gemm(CudaComputeContext& ctx, const GemmArgs& g);

}  // namespace zt::models::cuda
