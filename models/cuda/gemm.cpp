#include "models/cuda/gemm.h"

#include <cstdint>
#include <mutex>

#include "core/cuda/cuda_check.h"
#include "core/log.h"
#include "models/cuda/gemm_epilogue_rules.h"

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

namespace {

// The descriptors of one cuBLASLt product, destroyed with it.
struct LtProduct {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  LtProduct() = default;
  LtProduct(const LtProduct&) = delete;
  LtProduct& operator=(const LtProduct&) = delete;
  ~LtProduct() {
    for (cublasLtMatrixLayout_t l : {a, b, d})
      if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
  template <typename T> void set(cublasLtMatmulDescAttributes_t attribute, const T& value) {
    ZT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, attribute, &value, sizeof(value)));
  }
};

cublasLtEpilogue_t lt_epilogue(GemmEpilogue::Kind kind) {
  switch (kind) {
    case GemmEpilogue::Kind::bias: return CUBLASLT_EPILOGUE_BIAS;
    case GemmEpilogue::Kind::gelu_bias: return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    case GemmEpilogue::Kind::dgelu: return CUBLASLT_EPILOGUE_DGELU;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

}  // namespace

bool gemm_with_epilogue(CudaComputeContext& ctx, const GemmArgs& g, const GemmEpilogue& e) {
  if (!ctx.gemm_epilogues() || g.batch != 1 || g.alpha != 1.0f || g.beta != 0.0f) return false;
  const bool has_bias = e.kind != GemmEpilogue::Kind::dgelu, has_aux = e.kind != GemmEpilogue::Kind::bias;
  if (!gemm_epilogue_applies(ctx.dtype(), {g.A, g.B, g.C, has_bias ? e.bias : nullptr, has_aux ? e.aux : nullptr},
                             {g.lda, g.ldb, g.ldc, has_aux ? e.aux_ld : 8}))
    return false;
  const cudaDataType_t t = cuda_type(ctx.dtype());
  // Column-major as in gemm(): cuBLAS's A is our B and its B our A, each keeping its transpose.
  const cublasOperation_t op_a = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  LtProduct p;
  ZT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  p.set(CUBLASLT_MATMUL_DESC_TRANSA, op_a);
  p.set(CUBLASLT_MATMUL_DESC_TRANSB, op_b);
  p.set(CUBLASLT_MATMUL_DESC_EPILOGUE, lt_epilogue(e.kind));
  if (has_bias) {
    p.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, e.bias);
    p.set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, t);  // the bias is a parameter in the compute dtype
  }
  if (has_aux) {
    p.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, e.aux);
    p.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, static_cast<std::int64_t>(e.aux_ld));
  }
  // op(A) is (N, K) and op(B) (K, M) in cuBLAS's terms; D is (N, M), leading dim ldc.
  const bool a_plain = op_a == CUBLAS_OP_N, b_plain = op_b == CUBLAS_OP_N;
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.a, t, a_plain ? g.N : g.K, a_plain ? g.K : g.N, g.ldb));
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.b, t, b_plain ? g.K : g.M, b_plain ? g.M : g.K, g.lda));
  ZT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.d, t, g.N, g.M, g.ldc));

  cublasLtMatmulPreference_t preference = nullptr;
  ZT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const std::size_t workspace = ctx.gemm_workspace_bytes();
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof(workspace));
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  const cublasStatus_t asked =
      cublasLtMatmulAlgoGetHeuristic(ctx.cublas_lt(), p.op, p.a, p.b, p.d, p.d, preference, 1, &best, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (asked != CUBLAS_STATUS_SUCCESS || found == 0) {  // no algorithm: the separate kernels, said once
    static std::once_flag said;
    std::call_once(said, [&] {
      log::warn("cuBLASLt has no algorithm for a ({} x {} x {}) product with epilogue {}; the separate kernels run",
                g.M, g.N, g.K, static_cast<int>(lt_epilogue(e.kind)));
    });
    return false;
  }

  const float alpha = 1.0f, beta = 0.0f;
  ZT_CUBLAS_CHECK(cublasLtMatmul(ctx.cublas_lt(), p.op, &alpha, g.B, p.a, g.A, p.b, &beta, g.C, p.d, g.C, p.d,
                                 &best.algo, ctx.gemm_workspace(), workspace, ctx.handle()));
  ctx.count_epilogue_product();
  return true;
}

}  // namespace zt::models::cuda
