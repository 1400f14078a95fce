#include "models/ops/rmsnorm.h"

#include <cmath>

#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int rows, int C, float eps,
                     RowGroups groups) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t at = groups.offset(r, C);
    const float* x = inp + at;
    float* o = out + at;
    double ss = 0.0;  // in double: the reference should not be what loses precision
    for (int c = 0; c < C; ++c) ss += static_cast<double>(x[c]) * x[c];
    float s = static_cast<float>(1.0 / std::sqrt(ss / C + eps));
    for (int c = 0; c < C; ++c) o[c] = weight[c] * (x[c] * s);
    rstd[r] = s;
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                      const float* rstd, int rows, int C, RowGroups groups, bool accumulate) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t at = groups.offset(r, C);
    const float* x = inp + at;
    const float* d = dout + at;
    float* dx = dinp + at;
    const float s = rstd[r];
    // With xhat = x * s and g = dout * weight:  dx = s * (g - xhat * mean(g * xhat)).
    double gx = 0.0;
    for (int c = 0; c < C; ++c) gx += static_cast<double>(d[c]) * weight[c] * (x[c] * s);
    const float gx_mean = static_cast<float>(gx / C);
    for (int c = 0; c < C; ++c) {  // reads d[c] before writing dx[c]: dx may alias d
      float xhat = x[c] * s;
      float g = d[c] * weight[c];
      dweight[c] += d[c] * xhat;
      float v = s * (g - xhat * gx_mean);
      dx[c] = accumulate ? dx[c] + v : v;
    }
  }
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

namespace {

// Elements a RowGroups placement of `rows` rows of C spans.
std::size_t span_of(int rows, int C, RowGroups g) { return rows == 0 ? 0 : g.offset(rows - 1, C) + C; }

}  // namespace

void rmsnorm_forward(ComputeContext& ctx, BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows,
                     int C, float eps, RowGroups groups) {
  check_act(ctx, out, span_of(rows, C, groups), "rmsnorm out");
  check_act(ctx, inp, span_of(rows, C, groups), "rmsnorm inp");
  check(ctx, rstd, DType::f32, rows, "rmsnorm rstd");
  check_act(ctx, weight, C, "rmsnorm weight");
  if (ctx.device().is_cuda()) return on_cuda::rmsnorm_forward(ctx, out, rstd, inp, weight, rows, C, eps, groups);
  cpu::Fp32Views w;
  cpu::rmsnorm_forward(w.out(out), w.out(rstd), w.in(inp), w.in(weight), rows, C, eps, groups);
  w.store();
}

void rmsnorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                      BufferView weight, BufferView rstd, int rows, int C, RowGroups groups, bool accumulate) {
  check_act(ctx, dinp, span_of(rows, C, groups), "rmsnorm dinp");
  check_act(ctx, dout, span_of(rows, C, groups), "rmsnorm dout");
  check_act(ctx, inp, span_of(rows, C, groups), "rmsnorm inp");
  check(ctx, rstd, DType::f32, rows, "rmsnorm rstd");
  check_act(ctx, weight, C, "rmsnorm weight");
  check_act(ctx, dweight, C, "rmsnorm dweight");
  if (ctx.device().is_cuda())
    return on_cuda::rmsnorm_backward(ctx, dinp, dweight, dout, inp, weight, rstd, rows, C, groups, accumulate);
  cpu::Fp32Views w;
  cpu::rmsnorm_backward(w.out(dinp), w.out(dweight), w.in(dout), w.in(inp), w.in(weight), w.in(rstd), rows, C, groups,
                        accumulate);
  w.store();
}

}  // namespace zt::models::ops
