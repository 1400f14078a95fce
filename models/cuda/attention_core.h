// The part of causal self-attention that every head layout shares, on heads already split out:
// q, k, v, y (and their gradients) are (B*NH, T, hs), att is (B*NH, T, T). GPT-2's attention and
// the Llama family's grouped-query attention differ only in how heads are split and merged
// (ops/attention.cu, ops/gqa_attention.cu). Only compiled with the CUDA backend.
#pragma once

#include "models/cuda/cuda_context.h"

namespace zt::models::cuda {

// att = causal_softmax(q k^T / sqrt(hs)); y = att v.
void attention_core_forward(CudaComputeContext& ctx, const void* q, const void* k, const void* v, void* y, void* att,
                            int batch_heads, int T, int hs);
// From dy and the saved att: datt (scratch, then overwritten by the softmax backward), dq, dk, dv.
void attention_core_backward(CudaComputeContext& ctx, const void* q, const void* k, const void* v, const void* dy,
                             const void* att, void* datt, void* dq, void* dk, void* dv, int batch_heads, int T, int hs);

}  // namespace zt::models::cuda
