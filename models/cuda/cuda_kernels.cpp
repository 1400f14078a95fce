#include "models/cuda/cuda_kernels.h"

#include <cmath>

#include "models/cuda/attention_core.h"
#include "models/cuda/cuda_context.h"
#include "models/cuda/gemm.h"
#include "models/cuda/kernels.h"
#include "models/ops.h"

namespace zt::models {
namespace {

std::size_t sz(int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }
float* f(const BufferView& v) { return static_cast<float*>(v.data); }

}  // namespace

void CudaKernels::embedding_forward(BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B, int T,
                                    int C) {
  cuda::embedding_forward(out.data, ops::int32_view(tokens), wte.data, wpe.data, B, T, C, ctx_.dtype(),
                          ctx_.handle());
}

void CudaKernels::embedding_backward(BufferView dwte, BufferView dwpe, BufferView dout, BufferView,
                                     const ops::TokenIndex& index, int B, int T, int C) {
  cuda::embedding_backward(dwte.data, dwpe.data, dout.data, ops::int32_view(index.positions),
                           ops::int32_view(index.starts), ops::int32_view(index.tokens), index.groups, B, T, C,
                           ctx_.dtype(), ctx_.handle());
}

void CudaKernels::layernorm_forward(BufferView out, BufferView mean, BufferView rstd, BufferView inp,
                                    BufferView weight, BufferView bias, int N, int C) {
  cuda::layernorm_forward(out.data, f(mean), f(rstd), inp.data, weight.data, bias.data, N, C, ctx_.dtype(),
                          ctx_.handle());
}

void CudaKernels::layernorm_backward(BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                                     BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N,
                                     int C) {
  float* scratch = ctx_.reduction_scratch(cuda::column_sum_scratch_floats(N, 2 * C));
  cuda::layernorm_backward(dinp.data, dweight.data, dbias.data, dout.data, inp.data, weight.data, f(mean), f(rstd),
                           scratch, N, C, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::linear_forward(BufferView out, BufferView inp, BufferView weight, BufferView bias, int N, int IC,
                                 int OC, int ldo) {
  // out (N, OC) = inp (N, IC) weight^T (IC, OC)
  cuda::GemmArgs g;
  g.trans_b = true;
  g.M = N, g.N = OC, g.K = IC;
  g.A = inp.data, g.lda = IC, g.B = weight.data, g.ldb = IC, g.C = out.data, g.ldc = ldo;
  cuda::gemm(ctx_, g);
  if (bias.numel > 0) cuda::bias_forward(out.data, bias.data, N, OC, ldo, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::linear_backward(BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                                  BufferView inp, BufferView weight, int N, int IC, int OC, int ldo) {
  if (dinp.numel > 0) {  // dinp (N, IC) = dout (N, OC) weight (OC, IC)
    cuda::GemmArgs g;
    g.M = N, g.N = IC, g.K = OC;
    g.A = dout.data, g.lda = ldo, g.B = weight.data, g.ldb = IC, g.C = dinp.data, g.ldc = IC;
    cuda::gemm(ctx_, g);
  }
  {  // dweight (OC, IC) += dout^T (OC, N) inp (N, IC)
    cuda::GemmArgs g;
    g.trans_a = true;
    g.M = OC, g.N = IC, g.K = N;
    g.beta = 1.0f;
    g.A = dout.data, g.lda = ldo, g.B = inp.data, g.ldb = IC, g.C = dweight.data, g.ldc = IC;
    cuda::gemm(ctx_, g);
  }
  if (dbias.numel > 0)
    cuda::bias_backward(dbias.data, dout.data, ctx_.reduction_scratch(cuda::column_sum_scratch_floats(N, OC)), N, OC,
                        ldo, ctx_.dtype(), ctx_.handle());
}

// The fused ops of kernels.h as their two kernels each: on the GPU these passes are short next to
// the products, and the composition is the one the CUDA tests check against the CPU.
void CudaKernels::residual_layernorm_forward(BufferView mid, BufferView out, BufferView mean, BufferView rstd,
                                             BufferView a, BufferView b, BufferView weight, BufferView bias, int N,
                                             int C) {
  cuda::residual_forward(mid.data, a.data, b.data, sz(N, C), ctx_.dtype(), ctx_.handle());
  layernorm_forward(out, mean, rstd, mid, weight, bias, N, C);
}

void CudaKernels::bias_gelu_forward(BufferView out, BufferView pre, BufferView bias, int N, int OC) {
  cuda::bias_forward(pre.data, bias.data, N, OC, OC, ctx_.dtype(), ctx_.handle());
  cuda::gelu_forward(out.data, pre.data, sz(N, OC), ctx_.dtype(), ctx_.handle());
}

void CudaKernels::gelu_bias_backward(BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                                     int OC) {
  cuda::gelu_backward(dpre.data, pre.data, dout.data, sz(N, OC), ctx_.dtype(), ctx_.handle());
  cuda::bias_backward(dbias.data, dpre.data, ctx_.reduction_scratch(cuda::column_sum_scratch_floats(N, OC)), N, OC,
                      OC, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::residual_forward(BufferView out, BufferView a, BufferView b) {
  cuda::residual_forward(out.data, a.data, b.data, a.numel, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::attention_forward(BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B, int T,
                                    int C, int NH) {
  const DType dt = ctx_.dtype();
  const std::size_t n = sz(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es, *y = base + 6 * n * es;
  cuda::split_heads(q, k, v, qkv.data, B, T, C, NH, dt, ctx_.handle());
  cuda::attention_core_forward(ctx_, q, k, v, y, att.data, B * NH, T, C / NH);
  cuda::heads_to_rows(out.data, y, B, T, C, NH, dt, ctx_.handle());
}

void CudaKernels::attention_backward(BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                                     BufferView scratch, int B, int T, int C, int NH) {
  const DType dt = ctx_.dtype();
  const std::size_t n = sz(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es;
  void *dq = base + 3 * n * es, *dk = base + 4 * n * es, *dv = base + 5 * n * es, *dy = base + 6 * n * es;
  void* datt = base + 7 * n * es;
  cuda::split_heads(q, k, v, qkv.data, B, T, C, NH, dt, ctx_.handle());
  cuda::rows_to_heads(dy, dout.data, B, T, C, NH, dt, ctx_.handle());
  cuda::attention_core_backward(ctx_, q, k, v, dy, att.data, datt, dq, dk, dv, B * NH, T, C / NH);
  cuda::merge_heads(dqkv.data, dq, dk, dv, B, T, C, NH, dt, ctx_.handle());
}

void CudaKernels::softmax_xent_forward(BufferView losses, BufferView logits, BufferView targets, int N, int V,
                                       int Vp) {
  cuda::softmax_xent_forward(f(losses), logits.data, ops::int32_view(targets), N, V, Vp, ctx_.dtype(),
                             ctx_.handle());
}

void CudaKernels::softmax_xent_backward(BufferView dlogits, BufferView logits, BufferView targets, float dloss, int N,
                                        int V, int Vp) {
  cuda::softmax_xent_backward(dlogits.data, logits.data, ops::int32_view(targets), dloss, N, V, Vp, ctx_.dtype(),
                              ctx_.handle());
}

void CudaKernels::add_mean_loss(BufferView acc, BufferView losses, int valid) {
  cuda::add_mean_loss(static_cast<double*>(acc.data), f(losses), losses.numel, valid, ctx_.handle());
}

}  // namespace zt::models
