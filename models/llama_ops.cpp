#include "models/llama_ops.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "models/op_checks.h"

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

namespace {

// Elements a RowGroups placement of `rows` rows of C spans.
std::size_t span_of(int rows, int C, RowGroups g) { return rows == 0 ? 0 : g.offset(rows - 1, C) + C; }

}  // namespace

void token_embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, int N, int C) {
  check_act(ctx, out, sz(N, C), "token_embedding out");
  check(ctx, tokens, DType::f32, N, "token_embedding tokens");
  check_act(ctx, wte, C, "token_embedding wte");
  ctx.kernels().token_embedding_forward(out, tokens, wte, N, C);
}

void token_embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dout, BufferView tokens,
                              const TokenIndex& index, int N, int C) {
  check_act(ctx, dout, sz(N, C), "token_embedding dout");
  check_act(ctx, dwte, C, "token_embedding dwte");
  ctx.kernels().token_embedding_backward(dwte, dout, tokens, index, N, C);
}

void rmsnorm_forward(ComputeContext& ctx, BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows,
                     int C, float eps, RowGroups groups) {
  check_act(ctx, out, span_of(rows, C, groups), "rmsnorm out");
  check_act(ctx, inp, span_of(rows, C, groups), "rmsnorm inp");
  check(ctx, rstd, DType::f32, rows, "rmsnorm rstd");
  check_act(ctx, weight, C, "rmsnorm weight");
  ctx.kernels().rmsnorm_forward(out, rstd, inp, weight, rows, C, eps, groups);
}

void rmsnorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                      BufferView weight, BufferView rstd, int rows, int C, RowGroups groups, bool accumulate) {
  check_act(ctx, dinp, span_of(rows, C, groups), "rmsnorm dinp");
  check_act(ctx, dout, span_of(rows, C, groups), "rmsnorm dout");
  check_act(ctx, inp, span_of(rows, C, groups), "rmsnorm inp");
  check(ctx, rstd, DType::f32, rows, "rmsnorm rstd");
  check_act(ctx, weight, C, "rmsnorm weight");
  check_act(ctx, dweight, C, "rmsnorm dweight");
  ctx.kernels().rmsnorm_backward(dinp, dweight, dout, inp, weight, rstd, rows, C, groups, accumulate);
}

void rope(ComputeContext& ctx, BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
          bool inverse) {
  check_act(ctx, x, sz(B * T - 1, ld) + sz(heads, hs), "rope x");
  if (hs % 2 != 0 || inv_freq.size() != static_cast<std::size_t>(hs / 2))
    throw std::invalid_argument(fmt::format("rope: head size {} needs an even size and {} frequencies, got {}", hs,
                                            hs / 2, inv_freq.size()));
  ctx.kernels().rope(x, inv_freq, B, T, heads, hs, ld, inverse);
}

void swiglu_forward(ComputeContext& ctx, BufferView out, BufferView gu, int N, int I) {
  check_act(ctx, out, sz(N, I), "swiglu out");
  check_act(ctx, gu, sz(N, 2 * I), "swiglu gu");
  ctx.kernels().swiglu_forward(out, gu, N, I);
}

void swiglu_backward(ComputeContext& ctx, BufferView dgu, BufferView dout, BufferView gu, int N, int I) {
  check_act(ctx, dgu, sz(N, 2 * I), "swiglu dgu");
  check_act(ctx, dout, sz(N, I), "swiglu dout");
  check_act(ctx, gu, sz(N, 2 * I), "swiglu gu");
  ctx.kernels().swiglu_backward(dgu, dout, gu, N, I);
}

std::size_t gqa_attention_scratch_numel(Device device, int B, int T, int NH, int KV, int hs) {
  (void)KV;
  if (device.is_cpu()) return sz(T, T);
  // q, k, v (k and v repeated to NH heads) and dq, dk, dv (B, NH, T, hs) each, y/dy (B, NH, T, hs),
  // datt (B, NH, T, T)
  return 7 * sz(B * T, NH * hs) + sz(B * NH, T) * T;
}

namespace {
void check_gqa(const ComputeContext& ctx, BufferView att, BufferView qkv, BufferView scratch, int B, int T, int NH,
               int KV, int hs) {
  if (KV < 1 || NH % KV != 0)
    throw std::invalid_argument(fmt::format("gqa attention: {} key/value heads do not divide {} heads", KV, NH));
  check_act(ctx, att, sz(B * NH, T) * T, "gqa attention att");
  check_act(ctx, qkv, sz(B * T, (NH + 2 * KV) * hs), "gqa attention qkv");
  check_act(ctx, scratch, gqa_attention_scratch_numel(ctx.device(), B, T, NH, KV, hs), "gqa attention scratch");
}
}  // namespace

void gqa_attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch,
                           int B, int T, int NH, int KV, int hs) {
  check_gqa(ctx, att, qkv, scratch, B, T, NH, KV, hs);
  check_act(ctx, out, sz(B * T, NH * hs), "gqa attention out");
  ctx.kernels().gqa_attention_forward(out, att, qkv, scratch, B, T, NH, KV, hs);
}

void gqa_attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                            BufferView scratch, int B, int T, int NH, int KV, int hs) {
  check_gqa(ctx, att, qkv, scratch, B, T, NH, KV, hs);
  check_act(ctx, dqkv, sz(B * T, (NH + 2 * KV) * hs), "gqa attention dqkv");
  check_act(ctx, dout, sz(B * T, NH * hs), "gqa attention dout");
  ctx.kernels().gqa_attention_backward(dqkv, dout, qkv, att, scratch, B, T, NH, KV, hs);
}

}  // namespace zt::models::ops
