// Causal attention without a (T, T) matrix, for the attentions the flash kernels take
// (flash_attention_takes): cuDNN's fused kernels where they run (cudnn_attention.h), the flash
// kernels otherwise (flash_attention.h). Both read q, k and v in the layouts `a` names and keep one
// float of statistics per (b, h, t); backward takes the path its forward took.
#pragma once

#include "models/cuda/cuda_context.h"
#include "models/cuda/flash_attention_rules.h"

namespace zt::models::cuda {

void fused_attention_forward(CudaComputeContext& c, const FlashAttention& a, const void* q, const void* k,
                             const void* v, void* y, float* stats);
// scratch: flash_attention_scratch_floats floats (the flash kernels' backward).
void fused_attention_backward(CudaComputeContext& c, const FlashAttention& a, const void* q, const void* k,
                              const void* v, const void* y, const void* dy, const float* stats, float* scratch,
                              void* dq, void* dk, void* dv);

}  // namespace zt::models::cuda
