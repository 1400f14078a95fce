// The layer operations: each takes BufferViews on the context's device, checks them for device,
// dtype and size, and runs the context's kernels (kernels.h): the CPU reference (models/layers/*,
// fp32 only) or the CUDA kernels (models/cuda/*, fp32, bf16 or f16 storage). Shapes and
// accumulate-vs-overwrite rules are those of the CPU reference headers, which document each op.
//
// Integer tensors (tokens, targets) are stored in 4-byte buffers typed f32 that hold int32 bit
// patterns, because the core DType has no integer type; int32_view() reads them.
#pragma once

#include <cstdint>

#include "models/compute_context.h"
#include "core/buffer.h"

namespace zt::models::ops {

std::int32_t* int32_view(const BufferView& view);

// Sorted-by-token index of one batch, built on the host, that lets the GPU embedding backward
// sum each token's rows in a fixed order (deterministic, no atomics). Ignored on the CPU.
struct TokenIndex {
  BufferView positions;  // (B*T) int32: positions grouped by token, ascending within a group
  BufferView starts;     // (groups + 1) int32: group g is positions[starts[g] .. starts[g+1])
  BufferView tokens;     // (groups) int32: the token of each group
  int groups = 0;
};

void embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B,
                       int T, int C);
void embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                        const TokenIndex& index, int B, int T, int C);

// mean, rstd: f32 (N). Backward accumulates into dinp, dweight, dbias.
void layernorm_forward(ComputeContext& ctx, BufferView out, BufferView mean, BufferView rstd, BufferView inp,
                       BufferView weight, BufferView bias, int N, int C);
void layernorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                        BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N, int C);

// bias / dbias / dinp may be empty views (numel 0) when absent or not needed.
void linear_forward(ComputeContext& ctx, BufferView out, BufferView inp, BufferView weight, BufferView bias, int N,
                    int IC, int OC, int ldo);
// dinp is overwritten; dweight and dbias accumulate.
void linear_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                     BufferView inp, BufferView weight, int N, int IC, int OC, int ldo);

// mid = a + b (may alias a or b), then layernorm_forward(out, mean, rstd, mid, ...) in one sweep.
void residual_layernorm_forward(ComputeContext& ctx, BufferView mid, BufferView out, BufferView mean, BufferView rstd,
                                BufferView a, BufferView b, BufferView weight, BufferView bias, int N, int C);

// GELU after a linear layer computed without its bias (linear_forward with an empty bias view):
// pre (N, OC) += bias in place, out = gelu(pre). Backward: dpre = dout * gelu'(pre) (dpre may
// alias dout), dbias += column sums of dpre; then linear_backward with an empty dbias view.
void bias_gelu_forward(ComputeContext& ctx, BufferView out, BufferView pre, BufferView bias, int N, int OC);
void gelu_bias_backward(ComputeContext& ctx, BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                        int OC);

void residual_forward(ComputeContext& ctx, BufferView out, BufferView a, BufferView b);  // out may alias a or b

// Scratch views: attention_scratch_numel() elements of the compute dtype.
std::size_t attention_scratch_numel(Device device, int B, int T, int C, int NH);
void attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B,
                       int T, int C, int NH);
void attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                        BufferView scratch, int B, int T, int C, int NH);

// losses: f32 (N); targets int32 (N).
void softmax_xent_forward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets, int N, int V,
                          int Vp);
void softmax_xent_backward(ComputeContext& ctx, BufferView dlogits, BufferView logits, BufferView targets, float dloss,
                           int N, int V, int Vp);

// acc: one f64 (two f32 elements) += the batch's mean loss, sum(losses) / valid, kept on the device.
void add_mean_loss(ComputeContext& ctx, BufferView acc, BufferView losses, int valid);

void copy(ComputeContext& ctx, BufferView dst, BufferView src);
void fill_zero(ComputeContext& ctx, BufferView dst);

}  // namespace zt::models::ops
