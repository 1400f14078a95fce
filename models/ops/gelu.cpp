#include "models/ops/gelu.h"

#include <cmath>

#include "models/cpu/fast_math.h"
#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"
#include "models/ops/linear.h"

namespace zt::models::cpu {

namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;
}  // namespace

namespace reference {

void gelu_forward(float* out, const float* inp, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float x = inp[i];
    out[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
  }
}

void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float x = inp[i];
    float u = kSqrt2OverPi * (x + kCubic * x * x * x);
    float th = std::tanh(u);
    float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
    float grad = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
    dinp[i] = dout[i] * grad;
  }
}

}  // namespace reference

namespace {

std::size_t at(int n, int OC) { return static_cast<std::size_t>(n) * OC; }

// Row by row (the bias row stays in L1): the reference's formulas with the vectorisable tanh.
ZT_CPU_KERNEL void bias_gelu_rows(float* out, float* pre, const float* bias, int N, int OC) {
  for (int n = 0; n < N; ++n) {
    float* p = pre + at(n, OC);
    float* o = out + at(n, OC);
#pragma omp simd
    for (int c = 0; c < OC; ++c) {
      const float x = p[c] + bias[c];
      p[c] = x;
      o[c] = 0.5f * x * (1.0f + fast::tanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
    }
  }
}

ZT_CPU_KERNEL void gelu_bias_backward_rows(float* dpre, float* dbias, const float* pre, const float* dout, int N,
                                           int OC) {
  for (int n = 0; n < N; ++n) {
    const float* p = pre + at(n, OC);
    const float* d = dout + at(n, OC);
    float* dp = dpre + at(n, OC);
#pragma omp simd
    for (int c = 0; c < OC; ++c) {
      const float x = p[c];
      const float th = fast::tanh(kSqrt2OverPi * (x + kCubic * x * x * x));
      const float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
      const float g = d[c] * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du);
      dp[c] = g;
      dbias[c] += g;
    }
  }
}

}  // namespace

void bias_gelu_forward(float* out, float* pre, const float* bias, int N, int OC) {
  if (!zt::reference_cpu_kernels()) return bias_gelu_rows(out, pre, bias, N, OC);
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < OC; ++c) pre[at(n, OC) + c] += bias[c];
  reference::gelu_forward(out, pre, at(N, OC));
}

void gelu_bias_backward(float* dpre, float* dbias, const float* pre, const float* dout, int N, int OC) {
  if (!zt::reference_cpu_kernels()) return gelu_bias_backward_rows(dpre, dbias, pre, dout, N, OC);
  reference::gelu_backward(dpre, pre, dout, at(N, OC));
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < OC; ++c) dbias[c] += dpre[at(n, OC) + c];
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

void bias_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView bias, int N, int OC) {
  check_act(ctx, out, sz(N, OC), "gelu out");
  check_act(ctx, pre, sz(N, OC), "gelu pre");
  check_act(ctx, bias, OC, "gelu bias");
  if (ctx.device().is_cuda()) return on_cuda::bias_gelu_forward(ctx, out, pre, bias, N, OC);
  cpu::Fp32Views w;
  cpu::bias_gelu_forward(w.out(out), w.out(pre), w.in(bias), N, OC);
  w.store();
}

void gelu_bias_backward(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                        int OC) {
  check_act(ctx, dpre, sz(N, OC), "gelu dpre");
  check_act(ctx, dbias, OC, "gelu dbias");
  check_act(ctx, pre, sz(N, OC), "gelu pre");
  check_act(ctx, dout, sz(N, OC), "gelu dout");
  if (ctx.device().is_cuda()) return on_cuda::gelu_bias_backward(ctx, dpre, dbias, pre, dout, N, OC);
  cpu::Fp32Views w;
  cpu::gelu_bias_backward(w.out(dpre), w.out(dbias), w.in(pre), w.in(dout), N, OC);
  w.store();
}

void linear_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView inp, BufferView weight,
                         BufferView bias, int N, int IC, int OC) {
  if (ctx.device().is_cuda()) {
    check_act(ctx, out, sz(N, OC), "gelu out");
    check_act(ctx, pre, sz(N, OC), "gelu pre");
    check_act(ctx, inp, sz(N, IC), "linear inp");
    check_act(ctx, weight, sz(OC, IC), "linear weight");
    check_act(ctx, bias, OC, "gelu bias");
    return on_cuda::linear_gelu_forward(ctx, out, pre, inp, weight, bias, N, IC, OC);
  }
  linear_forward(ctx, pre, inp, weight, {}, N, IC, OC, OC);
  bias_gelu_forward(ctx, out, pre, bias, N, OC);
}

void linear_backward_into_gelu(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView dweight2,
                               BufferView dbias2, BufferView dout, BufferView gelu_out, BufferView weight2,
                               BufferView pre, int N, int OC, int OC2) {
  if (ctx.device().is_cuda()) {
    check_act(ctx, dpre, sz(N, OC), "gelu dpre");
    check_act(ctx, dbias, OC, "gelu dbias");
    check_act(ctx, dweight2, sz(OC2, OC), "linear dweight");
    check_act(ctx, dout, sz(N, OC2), "linear dout");
    check_act(ctx, gelu_out, sz(N, OC), "gelu out");
    check_act(ctx, weight2, sz(OC2, OC), "linear weight");
    check_act(ctx, pre, sz(N, OC), "gelu pre");
    if (dbias2.numel > 0) check_act(ctx, dbias2, OC2, "linear dbias");
    return on_cuda::linear_backward_into_gelu(ctx, dpre, dbias, dweight2, dbias2, dout, gelu_out, weight2, pre, N, OC,
                                              OC2);
  }
  linear_backward(ctx, dpre, dweight2, dbias2, dout, gelu_out, weight2, N, OC, OC2, OC2);
  gelu_bias_backward(ctx, dpre, dbias, pre, dpre, N, OC);
}

}  // namespace zt::models::ops
