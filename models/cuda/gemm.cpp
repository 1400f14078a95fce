#include "models/cuda/gemm.h"

#include "core/cuda/cuda_check.h"

namespace zt::models::cuda {

namespace {
cudaDataType_t cuda_type(DType dt) {
  switch (dt) {
    case DType::f32: return CUDA_R_32F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::f16: return CUDA_R_16F;
    case DType::i32: break;
  }
  throw std::invalid_argument("gemm: no products of i32 matrices");
}
}  // namespace

void gemm(CudaComputeContext& ctx, const GemmArgs& g) {
  // cuBLAS is column-major: a row-major C (M, N) is a column-major C^T (N, M) = op(B)^T op(A)^T, and a
  // row-major operand read column-major is already its own transpose, so the operands swap places
  // and keep their transpose flags.
  cudaDataType_t t = cuda_type(ctx.dtype());
  // 16-bit storage accumulates in fp32 on the tensor cores; fp32 storage computes in strict fp32
  // unless TF32 is allowed (precision.tf32), then on TF32 tensor cores with fp32 accumulation.
  cublasComputeType_t compute =
      ctx.dtype() == DType::f32 && ctx.allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  ZT_CUBLAS_CHECK(cublasGemmStridedBatchedEx(ctx.cublas(), op_b, op_a, g.N, g.M, g.K, &g.alpha, g.B, t, g.ldb,
                                             g.stride_b, g.A, t, g.lda, g.stride_a, &g.beta, g.C, t, g.ldc,
                                             g.stride_c, g.batch, compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace zt::models::cuda
