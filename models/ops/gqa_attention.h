// Causal grouped-query self-attention core (CPU reference, fp32, products through OpenBLAS).
// NH query heads share KV key/value heads: query head h reads key/value head h / (NH / KV), as
// transformers' repeat_kv does. KV == NH is multi-head attention, KV == 1 multi-query attention.
// The projections (and RoPE, applied to q and k beforehand) are outside.
#pragma once

#include <cstddef>

#include "models/ops/common.h"

namespace zt::models::cpu {

// qkv (B, T, W), W = (NH + 2 KV) hs, each row [q (NH hs) | k (KV hs) | v (KV hs)], already rotated
//   -> out (B, T, NH hs), att (B, NH, T, T) softmax probabilities (saved; zero above the diagonal).
void gqa_attention_forward(float* out, float* att, const float* qkv, int B, int T, int NH, int KV, int hs);
// dout (B, T, NH hs) -> dqkv (B, T, W), overwritten (dk, dv summed over the heads of each group).
// scratch holds T*T floats.
void gqa_attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                            int T, int NH, int KV, int hs);

}  // namespace zt::models::cpu

namespace zt::models::ops {

// On a context's views of its compute dtype; as GPT-2's attention (attention.h): where a CUDA
// context takes the flash kernels (gqa_attention_takes_flash: 16-bit, hs 64, the kernels reading
// q, k and v inside the qkv rows, each key/value head serving its group of query heads) att holds
// one float of row statistics per (b, h, t), and backward reads forward's output.
// att: gqa_attention_saved_numel() elements; scratch: gqa_attention_scratch_numel() elements.
bool gqa_attention_takes_flash(Device device, DType dtype, int B, int T, int NH, int KV, int hs);
std::size_t gqa_attention_saved_numel(Device device, DType dtype, int B, int T, int NH, int KV, int hs);
std::size_t gqa_attention_scratch_numel(Device device, DType dtype, int B, int T, int NH, int KV, int hs);
void gqa_attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch,
                           int B, int T, int NH, int KV, int hs);
void gqa_attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView out,
                            BufferView att, BufferView scratch, int B, int T, int NH, int KV, int hs);

// The op on a CUDA context (gqa_attention.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void gqa_attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch,
                           int B, int T, int NH, int KV, int hs);
void gqa_attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView out,
                            BufferView att, BufferView scratch, int B, int T, int NH, int KV, int hs);
}  // namespace on_cuda

}  // namespace zt::models::ops
