#include "models/ops/token_embedding.h"

#include <cstddef>
#include <cstring>

#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {

void token_embedding_forward(float* out, const std::int32_t* tokens, const float* wte, int N, int C) {
  for (int n = 0; n < N; ++n)
    std::memcpy(out + static_cast<std::size_t>(n) * C, wte + static_cast<std::size_t>(tokens[n]) * C,
                sizeof(float) * C);
}

void token_embedding_backward(float* dwte, const float* dout, const std::int32_t* tokens, int N, int C) {
  for (int n = 0; n < N; ++n) {
    float* row = dwte + static_cast<std::size_t>(tokens[n]) * C;
    const float* d = dout + static_cast<std::size_t>(n) * C;
    for (int c = 0; c < C; ++c) row[c] += d[c];
  }
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

void token_embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, int N, int C) {
  check_act(ctx, out, sz(N, C), "token_embedding out");
  check(ctx, tokens, DType::i32, N, "token_embedding tokens");
  check_act(ctx, wte, C, "token_embedding wte");
  if (ctx.device().is_cuda()) return on_cuda::token_embedding_forward(ctx, out, tokens, wte, N, C);
  cpu::Fp32Views w;
  cpu::token_embedding_forward(w.out(out), int32_view(tokens), w.in(wte), N, C);
  w.store();
}

void token_embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dout, BufferView tokens,
                              const TokenIndex& index, int N, int C) {
  check_act(ctx, dout, sz(N, C), "token_embedding dout");
  check_act(ctx, dwte, C, "token_embedding dwte");
  if (ctx.device().is_cuda()) return on_cuda::token_embedding_backward(ctx, dwte, dout, tokens, index, N, C);
  cpu::Fp32Views w;
  cpu::token_embedding_backward(w.out(dwte), w.in(dout), int32_view(tokens), N, C);
  w.store();
}

}  // namespace zt::models::ops
