#include "models/cuda/attention_core.h"

#include <cmath>

#include "models/cuda/gemm.h"
#include "models/cuda/shared_kernels.h"

namespace zt::models::cuda {
namespace {

long long area(int a, int b) { return static_cast<long long>(a) * b; }

// One strided-batched product over every head.
void batched(CudaComputeContext& ctx, int batch_heads, bool ta, bool tb, int M, int N, int K, float alpha,
             const void* A, int lda, long long sa, const void* B, int ldb, long long sb, void* C, int ldc,
             long long sc) {
  GemmArgs g;
  g.trans_a = ta, g.trans_b = tb, g.M = M, g.N = N, g.K = K, g.alpha = alpha;
  g.A = A, g.lda = lda, g.stride_a = sa, g.B = B, g.ldb = ldb, g.stride_b = sb, g.C = C, g.ldc = ldc,
  g.stride_c = sc, g.batch = batch_heads;
  gemm(ctx, g);
}

}  // namespace

void attention_core_forward(CudaComputeContext& ctx, const void* q, const void* k, const void* v, void* y, void* att,
                            int batch_heads, int T, int hs) {
  const long long sth = area(T, hs), stt = area(T, T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  batched(ctx, batch_heads, false, true, T, T, hs, scale, q, hs, sth, k, hs, sth, att, T, stt);  // att = q k^T
  causal_softmax_forward(att, batch_heads * T, T, ctx.dtype(), ctx.handle());
  batched(ctx, batch_heads, false, false, T, hs, T, 1.0f, att, T, stt, v, hs, sth, y, hs, sth);  // y = att v
}

void attention_core_backward(CudaComputeContext& ctx, const void* q, const void* k, const void* v, const void* dy,
                             const void* att, void* datt, void* dq, void* dk, void* dv, int batch_heads, int T, int hs) {
  const long long sth = area(T, hs), stt = area(T, T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  batched(ctx, batch_heads, false, true, T, T, hs, 1.0f, dy, hs, sth, v, hs, sth, datt, T, stt);   // datt = dy v^T
  batched(ctx, batch_heads, true, false, T, hs, T, 1.0f, att, T, stt, dy, hs, sth, dv, hs, sth);   // dv = att^T dy
  causal_softmax_backward(datt, att, batch_heads * T, T, ctx.dtype(), ctx.handle());
  batched(ctx, batch_heads, false, false, T, hs, T, scale, datt, T, stt, k, hs, sth, dq, hs, sth);  // dq = dpre k
  batched(ctx, batch_heads, true, false, T, hs, T, scale, datt, T, stt, q, hs, sth, dk, hs, sth);   // dk = dpre^T q
}

}  // namespace zt::models::cuda
