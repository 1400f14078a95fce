#include "models/ops/layernorm.h"

#include <cmath>
#include <cstddef>

#include "models/cpu/fast_math.h"
#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {
namespace reference {

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                       int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * C;
    float* o = out + static_cast<std::size_t>(n) * C;
    // Two passes in double: the reference should not be the thing that loses precision.
    double m = 0.0;
    for (int c = 0; c < C; ++c) m += x[c];
    m /= C;
    double v = 0.0;
    for (int c = 0; c < C; ++c) v += (x[c] - m) * (x[c] - m);
    v /= C;
    float s = static_cast<float>(1.0 / std::sqrt(v + kLayerNormEps));
    float mf = static_cast<float>(m);
    for (int c = 0; c < C; ++c) o[c] = (x[c] - mf) * s * weight[c] + bias[c];
    mean[n] = mf;
    rstd[n] = s;
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * C;
    const float* d = dout + static_cast<std::size_t>(n) * C;
    float* dx = dinp + static_cast<std::size_t>(n) * C;
    float m = mean[n], s = rstd[n];
    // With xhat = (x - m) * s and g = dout * w:  dx = s * (g - mean(g) - xhat * mean(g * xhat)).
    double g_mean = 0.0, gx_mean = 0.0;
    for (int c = 0; c < C; ++c) {
      float xhat = (x[c] - m) * s;
      float g = d[c] * weight[c];
      g_mean += g;
      gx_mean += g * xhat;
    }
    g_mean /= C;
    gx_mean /= C;
    for (int c = 0; c < C; ++c) {
      float xhat = (x[c] - m) * s;
      float g = d[c] * weight[c];
      dbias[c] += d[c];
      dweight[c] += d[c] * xhat;
      dx[c] += s * (g - static_cast<float>(g_mean) - xhat * static_cast<float>(gx_mean));
    }
  }
}

}  // namespace reference

namespace {

// Rows [n0, n1): the reference's formulas with float accumulation on the SIMD lanes (C is at most
// a few thousand, where a float sum loses nothing the tests or training can see).
ZT_CPU_KERNEL void layernorm_forward_rows(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                          const float* bias, std::size_t n0, std::size_t n1, int C) {
  for (std::size_t n = n0; n < n1; ++n) {
    const float* x = inp + n * C;
    float* o = out + n * C;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < C; ++c) sum += x[c];
    const float m = sum / static_cast<float>(C);
    float var = 0.0f;
#pragma omp simd reduction(+ : var)
    for (int c = 0; c < C; ++c) var += (x[c] - m) * (x[c] - m);
    const float s = 1.0f / std::sqrt(var / static_cast<float>(C) + kLayerNormEps);
#pragma omp simd
    for (int c = 0; c < C; ++c) o[c] = (x[c] - m) * s * weight[c] + bias[c];
    mean[n] = m;
    rstd[n] = s;
  }
}

// layernorm_forward_rows with the residual add in its first loop.
ZT_CPU_KERNEL void residual_layernorm_rows(float* mid, float* out, float* mean, float* rstd, const float* a,
                                           const float* b, const float* weight, const float* bias, std::size_t N,
                                           int C) {
  for (std::size_t n = 0; n < N; ++n) {
    const float* x1 = a + n * C;
    const float* x2 = b + n * C;
    float* x = mid + n * C;
    float* o = out + n * C;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < C; ++c) {
      const float v = x1[c] + x2[c];
      x[c] = v;
      sum += v;
    }
    const float m = sum / static_cast<float>(C);
    float var = 0.0f;
#pragma omp simd reduction(+ : var)
    for (int c = 0; c < C; ++c) var += (x[c] - m) * (x[c] - m);
    const float s = 1.0f / std::sqrt(var / static_cast<float>(C) + kLayerNormEps);
#pragma omp simd
    for (int c = 0; c < C; ++c) o[c] = (x[c] - m) * s * weight[c] + bias[c];
    mean[n] = m;
    rstd[n] = s;
  }
}

// Rows [n0, n1); dweight and dbias accumulate (+=).
ZT_CPU_KERNEL void layernorm_backward_rows(float* dinp, float* dweight, float* dbias, const float* dout,
                                           const float* inp, const float* weight, const float* mean,
                                           const float* rstd, std::size_t n0, std::size_t n1, int C) {
  for (std::size_t n = n0; n < n1; ++n) {
    const float* x = inp + n * C;
    const float* d = dout + n * C;
    float* dx = dinp + n * C;
    const float m = mean[n], s = rstd[n];
    float g_sum = 0.0f, gx_sum = 0.0f;
#pragma omp simd reduction(+ : g_sum, gx_sum)
    for (int c = 0; c < C; ++c) {
      float xhat = (x[c] - m) * s;
      float g = d[c] * weight[c];
      g_sum += g;
      gx_sum += g * xhat;
    }
    const float g_mean = g_sum / static_cast<float>(C), gx_mean = gx_sum / static_cast<float>(C);
#pragma omp simd
    for (int c = 0; c < C; ++c) {
      float xhat = (x[c] - m) * s;
      float g = d[c] * weight[c];
      dbias[c] += d[c];
      dweight[c] += d[c] * xhat;
      dx[c] += s * (g - g_mean - xhat * gx_mean);
    }
  }
}

}  // namespace

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                       int N, int C) {
  if (zt::reference_cpu_kernels()) return reference::layernorm_forward(out, mean, rstd, inp, weight, bias, N, C);
  layernorm_forward_rows(out, mean, rstd, inp, weight, bias, 0, N, C);
}

void residual_layernorm_forward(float* mid, float* out, float* mean, float* rstd, const float* a, const float* b,
                                const float* weight, const float* bias, int N, int C) {
  if (!zt::reference_cpu_kernels()) return residual_layernorm_rows(mid, out, mean, rstd, a, b, weight, bias, N, C);
  for (std::size_t i = 0; i < static_cast<std::size_t>(N) * C; ++i) mid[i] = a[i] + b[i];
  reference::layernorm_forward(out, mean, rstd, mid, weight, bias, N, C);
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C) {
  if (zt::reference_cpu_kernels()) return reference::layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
  layernorm_backward_rows(dinp, dweight, dbias, dout, inp, weight, mean, rstd, 0, N, C);
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

void layernorm_forward(ComputeContext& ctx, BufferView out, BufferView mean, BufferView rstd, BufferView inp,
                       BufferView weight, BufferView bias, int N, int C) {
  check_act(ctx, out, sz(N, C), "layernorm out");
  check_act(ctx, inp, sz(N, C), "layernorm inp");
  check(ctx, mean, DType::f32, N, "layernorm mean");
  check(ctx, rstd, DType::f32, N, "layernorm rstd");
  check_act(ctx, weight, C, "layernorm weight");
  check_act(ctx, bias, C, "layernorm bias");
  if (ctx.device().is_cuda()) return on_cuda::layernorm_forward(ctx, out, mean, rstd, inp, weight, bias, N, C);
  cpu::Fp32Views w;
  cpu::layernorm_forward(w.out(out), w.out(mean), w.out(rstd), w.in(inp), w.in(weight), w.in(bias), N, C);
  w.store();
}

void layernorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                        BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N, int C) {
  check_act(ctx, dinp, sz(N, C), "layernorm dinp");
  check_act(ctx, dout, sz(N, C), "layernorm dout");
  check_act(ctx, inp, sz(N, C), "layernorm inp");
  check_act(ctx, dweight, C, "layernorm dweight");
  check_act(ctx, dbias, C, "layernorm dbias");
  if (ctx.device().is_cuda())
    return on_cuda::layernorm_backward(ctx, dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
  cpu::Fp32Views w;
  cpu::layernorm_backward(w.out(dinp), w.out(dweight), w.out(dbias), w.in(dout), w.in(inp), w.in(weight), w.in(mean),
                          w.in(rstd), N, C);
  w.store();
}

void residual_layernorm_forward(ComputeContext& ctx, BufferView mid, BufferView out, BufferView mean, BufferView rstd,
                                BufferView a, BufferView b, BufferView weight, BufferView bias, int N, int C) {
  check_act(ctx, a, sz(N, C), "residual_layernorm a");
  check_act(ctx, b, sz(N, C), "residual_layernorm b");
  check_act(ctx, mid, sz(N, C), "residual_layernorm mid");
  check_act(ctx, out, sz(N, C), "residual_layernorm out");
  check(ctx, mean, DType::f32, N, "residual_layernorm mean");
  check(ctx, rstd, DType::f32, N, "residual_layernorm rstd");
  check_act(ctx, weight, C, "residual_layernorm weight");
  check_act(ctx, bias, C, "residual_layernorm bias");
  if (ctx.device().is_cuda())
    return on_cuda::residual_layernorm_forward(ctx, mid, out, mean, rstd, a, b, weight, bias, N, C);
  cpu::Fp32Views w;
  cpu::residual_layernorm_forward(w.out(mid), w.out(out), w.out(mean), w.out(rstd), w.in(a), w.in(b), w.in(weight),
                                  w.in(bias), N, C);
  w.store();
}

}  // namespace zt::models::ops
