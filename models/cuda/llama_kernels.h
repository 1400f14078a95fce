// Host entry points of the Llama-family CUDA kernels (models/cuda/llama_*.cu), in the style of
// kernels.h: plain pointers, the storage DType (f32, bf16 or f16; arithmetic in fp32) and the
// stream. Shapes and accumulate rules as in the CPU references (models/layers/rmsnorm.h, rope.h,
// swiglu.h, gqa_attention.h, token_embedding.h). llama_ops.cpp is the caller.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace zt::models::cuda {

void token_embedding_forward(void* out, const std::int32_t* tokens, const void* wte, int N, int C, DType dt,
                             cudaStream_t s);
void token_embedding_backward(void* dwte, const void* dout, const std::int32_t* positions, const std::int32_t* starts,
                              const std::int32_t* group_tokens, int groups, int C, DType dt, cudaStream_t s);

// Row r of length C starts at (r / group) * stride + (r % group) * C. scratch: f32,
// column_sum_scratch_floats(rows, C) elements (partial sums for dweight).
void rmsnorm_forward(void* out, float* rstd, const void* inp, const void* weight, int rows, int C, float eps,
                     int group, std::size_t stride, DType dt, cudaStream_t s);
void rmsnorm_backward(void* dinp, void* dweight, const void* dout, const void* inp, const void* weight,
                      const float* rstd, float* scratch, int rows, int C, int group, std::size_t stride,
                      bool accumulate, DType dt, cudaStream_t s);

// inv_freq: hs/2 host floats (at most kMaxRopeHalf), passed to the kernel by value.
inline constexpr int kMaxRopeHalf = 256;
void rope(void* x, const float* inv_freq, int B, int T, int heads, int hs, int ld, bool inverse, DType dt,
          cudaStream_t s);

void swiglu_forward(void* out, const void* gu, int N, int I, DType dt, cudaStream_t s);
void swiglu_backward(void* dgu, const void* dout, const void* gu, int N, int I, DType dt, cudaStream_t s);

// qkv rows (B, T, (NH + 2 KV) hs) -> q, k, v each (B, NH, T, hs), k and v repeated over the NH / KV
// query heads of their group (transformers' repeat_kv).
void gqa_split_heads(void* q, void* k, void* v, const void* qkv, int B, int T, int NH, int KV, int hs, DType dt,
                     cudaStream_t s);
// The inverse for gradients: dq -> its columns; dk, dv summed over each group's heads (in head
// order, deterministic) -> their columns. Overwrites dqkv.
void gqa_merge_heads(void* dqkv, const void* dq, const void* dk, const void* dv, int B, int T, int NH, int KV, int hs,
                     DType dt, cudaStream_t s);

}  // namespace zt::models::cuda
