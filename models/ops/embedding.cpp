#include "models/ops/embedding.h"

#include <cstddef>

#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {

void embedding_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      float* o = out + (static_cast<std::size_t>(b) * T + t) * C;
      const float* e = wte + static_cast<std::size_t>(tokens[b * T + t]) * C;
      const float* p = wpe + static_cast<std::size_t>(t) * C;
      for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
    }
}

void embedding_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const float* d = dout + (static_cast<std::size_t>(b) * T + t) * C;
      float* de = dwte + static_cast<std::size_t>(tokens[b * T + t]) * C;
      float* dp = dwpe + static_cast<std::size_t>(t) * C;
      for (int c = 0; c < C; ++c) {
        de[c] += d[c];
        dp[c] += d[c];
      }
    }
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

void embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B,
                       int T, int C) {
  check_act(ctx, out, sz(B * T, C), "embedding out");
  check(ctx, tokens, DType::i32, sz(B, T), "embedding tokens");
  check_act(ctx, wpe, sz(T, C), "embedding wpe");
  check_act(ctx, wte, C, "embedding wte");
  if (ctx.device().is_cuda()) return on_cuda::embedding_forward(ctx, out, tokens, wte, wpe, B, T, C);
  cpu::Fp32Views w;
  cpu::embedding_forward(w.out(out), int32_view(tokens), w.in(wte), w.in(wpe), B, T, C);
  w.store();
}

void embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                        const TokenIndex& index, int B, int T, int C) {
  check_act(ctx, dout, sz(B * T, C), "embedding dout");
  check_act(ctx, dwpe, sz(T, C), "embedding dwpe");
  check_act(ctx, dwte, C, "embedding dwte");
  if (ctx.device().is_cuda()) return on_cuda::embedding_backward(ctx, dwte, dwpe, dout, tokens, index, B, T, C);
  cpu::Fp32Views w;
  cpu::embedding_backward(w.out(dwte), w.out(dwpe), w.in(dout), int32_view(tokens), B, T, C);
  w.store();
}

}  // namespace zt::models::ops
