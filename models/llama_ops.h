// The layer operations of the Llama family behind the same interface as ops.h: each takes
// BufferViews on the context's device and runs the CPU reference (models/layers/*, fp32) or the
// CUDA kernels (models/cuda/llama_*.cu; fp32, bf16 or f16 storage, fp32 arithmetic). Shapes and
// accumulate-vs-overwrite rules are those of the CPU reference headers: rmsnorm.h, rope.h,
// swiglu.h, gqa_attention.h, token_embedding.h.
#pragma once

#include <span>

#include "models/compute_context.h"
#include "models/layers/rmsnorm.h"
#include "models/ops.h"
#include "core/buffer.h"

namespace zt::models::ops {

using cpu::RowGroups;

// tokens int32 (N), wte (V, C) -> out (N, C);  backward: dwte += (index groups the positions).
void token_embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, int N, int C);
void token_embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dout, BufferView tokens,
                              const TokenIndex& index, int N, int C);

// rstd: f32 (rows). Rows are placed as RowGroups says (contiguous by default).
void rmsnorm_forward(ComputeContext& ctx, BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows,
                     int C, float eps, RowGroups groups = {});
void rmsnorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                      BufferView weight, BufferView rstd, int rows, int C, RowGroups groups, bool accumulate);

// In place on the first `heads` head vectors of every row (stride ld) of x (B*T rows);
// inv_freq: hs/2 host floats (cpu::rope_inv_freq). inverse: the backward, applied to a gradient.
void rope(ComputeContext& ctx, BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
          bool inverse);

// gu (N, 2I) = [gate | up] -> out (N, I);  backward overwrites dgu (N, 2I).
void swiglu_forward(ComputeContext& ctx, BufferView out, BufferView gu, int N, int I);
void swiglu_backward(ComputeContext& ctx, BufferView dgu, BufferView dout, BufferView gu, int N, int I);

// Scratch views: gqa_attention_scratch_numel() elements of the compute dtype.
std::size_t gqa_attention_scratch_numel(Device device, int B, int T, int NH, int KV, int hs);
void gqa_attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch,
                           int B, int T, int NH, int KV, int hs);
void gqa_attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                            BufferView scratch, int B, int T, int NH, int KV, int hs);

}  // namespace zt::models::ops
