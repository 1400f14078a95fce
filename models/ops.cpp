#include "models/ops.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/device_ops.h"
#include "models/op_checks.h"

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

std::int32_t* int32_view(const BufferView& view) {
  if (dtype_size(view.dtype) != 4) throw std::invalid_argument("int32 data needs a 4-byte buffer");
  return static_cast<std::int32_t*>(view.data);
}

void embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B,
                       int T, int C) {
  check_act(ctx, out, sz(B * T, C), "embedding out");
  check(ctx, tokens, DType::f32, sz(B, T), "embedding tokens");
  check_act(ctx, wpe, sz(T, C), "embedding wpe");
  check_act(ctx, wte, C, "embedding wte");
  ctx.kernels().embedding_forward(out, tokens, wte, wpe, B, T, C);
}

void embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                        const TokenIndex& index, int B, int T, int C) {
  check_act(ctx, dout, sz(B * T, C), "embedding dout");
  check_act(ctx, dwpe, sz(T, C), "embedding dwpe");
  check_act(ctx, dwte, C, "embedding dwte");
  ctx.kernels().embedding_backward(dwte, dwpe, dout, tokens, index, B, T, C);
}

void layernorm_forward(ComputeContext& ctx, BufferView out, BufferView mean, BufferView rstd, BufferView inp,
                       BufferView weight, BufferView bias, int N, int C) {
  check_act(ctx, out, sz(N, C), "layernorm out");
  check_act(ctx, inp, sz(N, C), "layernorm inp");
  check(ctx, mean, DType::f32, N, "layernorm mean");
  check(ctx, rstd, DType::f32, N, "layernorm rstd");
  check_act(ctx, weight, C, "layernorm weight");
  check_act(ctx, bias, C, "layernorm bias");
  ctx.kernels().layernorm_forward(out, mean, rstd, inp, weight, bias, N, C);
}

void layernorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                        BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N, int C) {
  check_act(ctx, dinp, sz(N, C), "layernorm dinp");
  check_act(ctx, dout, sz(N, C), "layernorm dout");
  check_act(ctx, inp, sz(N, C), "layernorm inp");
  check_act(ctx, dweight, C, "layernorm dweight");
  check_act(ctx, dbias, C, "layernorm dbias");
  ctx.kernels().layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
}

void linear_forward(ComputeContext& ctx, BufferView out, BufferView inp, BufferView weight, BufferView bias, int N,
                    int IC, int OC, int ldo) {
  check_act(ctx, out, sz(N - 1, ldo) + OC, "linear out");
  check_act(ctx, inp, sz(N, IC), "linear inp");
  check_act(ctx, weight, sz(OC, IC), "linear weight");
  if (bias.numel > 0) check_act(ctx, bias, OC, "linear bias");
  ctx.kernels().linear_forward(out, inp, weight, bias, N, IC, OC, ldo);
}

void linear_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                     BufferView inp, BufferView weight, int N, int IC, int OC, int ldo) {
  check_act(ctx, dout, sz(N - 1, ldo) + OC, "linear dout");
  check_act(ctx, inp, sz(N, IC), "linear inp");
  check_act(ctx, weight, sz(OC, IC), "linear weight");
  check_act(ctx, dweight, sz(OC, IC), "linear dweight");
  if (dinp.numel > 0) check_act(ctx, dinp, sz(N, IC), "linear dinp");
  if (dbias.numel > 0) check_act(ctx, dbias, OC, "linear dbias");
  ctx.kernels().linear_backward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC, ldo);
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
  ctx.kernels().residual_layernorm_forward(mid, out, mean, rstd, a, b, weight, bias, N, C);
}

void bias_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView bias, int N, int OC) {
  check_act(ctx, out, sz(N, OC), "gelu out");
  check_act(ctx, pre, sz(N, OC), "gelu pre");
  check_act(ctx, bias, OC, "gelu bias");
  ctx.kernels().bias_gelu_forward(out, pre, bias, N, OC);
}

void gelu_bias_backward(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                        int OC) {
  check_act(ctx, dpre, sz(N, OC), "gelu dpre");
  check_act(ctx, dbias, OC, "gelu dbias");
  check_act(ctx, pre, sz(N, OC), "gelu pre");
  check_act(ctx, dout, sz(N, OC), "gelu dout");
  ctx.kernels().gelu_bias_backward(dpre, dbias, pre, dout, N, OC);
}

void residual_forward(ComputeContext& ctx, BufferView out, BufferView a, BufferView b) {
  check_act(ctx, out, a.numel, "residual out");
  check_act(ctx, a, a.numel, "residual a");
  check_act(ctx, b, a.numel, "residual b");
  ctx.kernels().residual_forward(out, a, b);
}

std::size_t attention_scratch_numel(Device device, int B, int T, int C, int NH) {
  if (device.is_cpu()) return sz(T, T);
  // q, k, v and dq, dk, dv (B, NH, T, hs) each, y/dy (B, NH, T, hs), datt (B, NH, T, T)
  return 7 * sz(B * T, C) + sz(B * NH, T) * T;
}

void attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B,
                       int T, int C, int NH) {
  check_act(ctx, out, sz(B * T, C), "attention out");
  check_act(ctx, att, sz(B * NH, T) * T, "attention att");
  check_act(ctx, qkv, sz(B * T, 3 * C), "attention qkv");
  check_act(ctx, scratch, attention_scratch_numel(ctx.device(), B, T, C, NH), "attention scratch");
  ctx.kernels().attention_forward(out, att, qkv, scratch, B, T, C, NH);
}

void attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                        BufferView scratch, int B, int T, int C, int NH) {
  check_act(ctx, dqkv, sz(B * T, 3 * C), "attention dqkv");
  check_act(ctx, dout, sz(B * T, C), "attention dout");
  check_act(ctx, att, sz(B * NH, T) * T, "attention att");
  check_act(ctx, qkv, sz(B * T, 3 * C), "attention qkv");
  check_act(ctx, scratch, attention_scratch_numel(ctx.device(), B, T, C, NH), "attention scratch");
  ctx.kernels().attention_backward(dqkv, dout, qkv, att, scratch, B, T, C, NH);
}

void softmax_xent_forward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets, int N, int V,
                          int Vp) {
  check(ctx, losses, DType::f32, N, "softmax_xent losses");
  check_act(ctx, logits, sz(N, Vp), "softmax_xent logits");
  check(ctx, targets, DType::f32, N, "softmax_xent targets");
  ctx.kernels().softmax_xent_forward(losses, logits, targets, N, V, Vp);
}

void softmax_xent_backward(ComputeContext& ctx, BufferView dlogits, BufferView logits, BufferView targets, float dloss,
                           int N, int V, int Vp) {
  check_act(ctx, dlogits, sz(N, Vp), "softmax_xent dlogits");
  check_act(ctx, logits, sz(N, Vp), "softmax_xent logits");
  check(ctx, targets, DType::f32, N, "softmax_xent targets");
  ctx.kernels().softmax_xent_backward(dlogits, logits, targets, dloss, N, V, Vp);
}

void add_mean_loss(ComputeContext& ctx, BufferView acc, BufferView losses, int valid) {
  check(ctx, acc, DType::f32, 2, "mean loss accumulator");
  check(ctx, losses, DType::f32, losses.numel, "losses");
  ctx.kernels().add_mean_loss(acc, losses, valid);
}

void copy(ComputeContext& ctx, BufferView dst, BufferView src) {
  if (dst.bytes() != src.bytes()) throw std::invalid_argument("ops::copy: sizes differ");
  copy_async(dst, src, ctx.stream());
}

void fill_zero(ComputeContext& ctx, BufferView dst) { zt::fill_zero(dst, ctx.stream()); }

}  // namespace zt::models::ops
