#include "models/ops/swiglu.h"

#include <cmath>
#include <cstddef>

#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {

namespace {
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
}  // namespace

void swiglu_forward(float* out, const float* gu, int N, int I) {
  for (int n = 0; n < N; ++n) {
    const float* gate = gu + static_cast<std::size_t>(n) * 2 * I;
    const float* up = gate + I;
    float* o = out + static_cast<std::size_t>(n) * I;
    for (int i = 0; i < I; ++i) o[i] = gate[i] * sigmoid(gate[i]) * up[i];
  }
}

void swiglu_backward(float* dgu, const float* dout, const float* gu, int N, int I) {
  for (int n = 0; n < N; ++n) {
    const float* gate = gu + static_cast<std::size_t>(n) * 2 * I;
    const float* up = gate + I;
    const float* d = dout + static_cast<std::size_t>(n) * I;
    float* dgate = dgu + static_cast<std::size_t>(n) * 2 * I;
    float* dup = dgate + I;
    for (int i = 0; i < I; ++i) {
      const float s = sigmoid(gate[i]);
      const float silu = gate[i] * s;
      dgate[i] = d[i] * up[i] * s * (1.0f + gate[i] * (1.0f - s));
      dup[i] = d[i] * silu;
    }
  }
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

void swiglu_forward(ComputeContext& ctx, BufferView out, BufferView gu, int N, int I) {
  check_act(ctx, out, sz(N, I), "swiglu out");
  check_act(ctx, gu, sz(N, 2 * I), "swiglu gu");
  if (ctx.device().is_cuda()) return on_cuda::swiglu_forward(ctx, out, gu, N, I);
  cpu::Fp32Views w;
  cpu::swiglu_forward(w.out(out), w.in(gu), N, I);
  w.store();
}

void swiglu_backward(ComputeContext& ctx, BufferView dgu, BufferView dout, BufferView gu, int N, int I) {
  check_act(ctx, dgu, sz(N, 2 * I), "swiglu dgu");
  check_act(ctx, dout, sz(N, I), "swiglu dout");
  check_act(ctx, gu, sz(N, 2 * I), "swiglu gu");
  if (ctx.device().is_cuda()) return on_cuda::swiglu_backward(ctx, dgu, dout, gu, N, I);
  cpu::Fp32Views w;
  cpu::swiglu_backward(w.out(dgu), w.in(dout), w.in(gu), N, I);
  w.store();
}

}  // namespace zt::models::ops
