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

// What cuBLASLt may fuse into a product's result D (M, N) = op(A) op(B) (row-major, as GemmArgs),
// computed in fp32 before D's one rounding:
//   bias:      D = AB + bias (N elements, one per column)
//   gelu_bias: D = gelu(AB + bias), aux (M, N; leading dim aux_ld) = AB + bias, the
//              pre-activation the backward reads
//   dgelu:     D = AB * gelu'(aux), GELU's backward fused into the product that computes its
//              output's gradient
// GELU is the tanh approximation, GPT-2's.
struct GemmEpilogue {
  enum class Kind { bias, gelu_bias, dgelu };
  Kind kind = Kind::bias;
  const void* bias = nullptr;
  void* aux = nullptr;
  int aux_ld = 0;
};
// The product with the epilogue, on cuBLASLt, where the context allows it (CudaOptions), the
// pointers and leading dims do (gemm_epilogue_rules.h) and cuBLASLt has an algorithm for it; false
// otherwise, with nothing queued, and the caller runs the separate kernels. g: batch 1, alpha 1,
// beta 0.
bool gemm_with_epilogue(CudaComputeContext& ctx, const GemmArgs& g, const GemmEpilogue& e);

}  // namespace zt::models::cuda
