#include "models/ops/residual.h"

#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {

void residual_forward(float* out, const float* a, const float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

void residual_forward(ComputeContext& ctx, BufferView out, BufferView a, BufferView b) {
  check_act(ctx, out, a.numel, "residual out");
  check_act(ctx, a, a.numel, "residual a");
  check_act(ctx, b, a.numel, "residual b");
  if (ctx.device().is_cuda()) return on_cuda::residual_forward(ctx, out, a, b);
  cpu::Fp32Views w;
  cpu::residual_forward(w.out(out), w.in(a), w.in(b), a.numel);
  w.store();
}

}  // namespace zt::models::ops
