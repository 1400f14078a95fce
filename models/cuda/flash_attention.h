// Causal attention that never writes the (T, T) score matrix: the scores of a 64 x 64 tile live
// in registers, the softmax runs online over the key tiles (flash attention), and backward
// recomputes them from the row statistics forward saved. Backward is two kernels, one over key
// tiles (dk, dv) and one over query tiles (dq), so that no gradient is accumulated with atomics
// and every run gives the same bits. 16-bit storage (bf16, f16) and head size 64, with the tensor
// cores' m16n8k16 products accumulating in fp32; other cases take the materialised path
// (attention_core.h). The rules (supported cases, sizes, grid) are in flash_attention_rules.h.
// Only compiled with the CUDA backend.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "core/dtype.h"
#include "models/cuda/flash_attention_rules.h"

namespace zt::models::cuda {

// y = softmax(q k^T / sqrt(64), causal) v, and stats (flash_attention_stats_floats) for backward.
void flash_attention_forward(const FlashAttention& a, const void* q, const void* k, const void* v, void* y,
                             float* stats, DType dt, cudaStream_t s);
// dq, dk, dv (in the layouts of q, k, v) overwritten from dy (in y's layout); dk and dv summed
// over the query heads of their group. scratch: flash_attention_scratch_floats floats.
void flash_attention_backward(const FlashAttention& a, const void* q, const void* k, const void* v, const void* y,
                              const void* dy, const float* stats, float* scratch, void* dq, void* dk, void* dv,
                              DType dt, cudaStream_t s);

// Whether an attention op whose shape the kernels take (flash_attention_takes) runs them on these
// views; forward and backward ask it of forward's buffers, so both take the same path (att means
// different things on the two). Views that are not 16-byte aligned ({out, att, qkv}) take the
// materialised path, which needs att and scratch of its own sizes (materialised_att,
// materialised_scratch elements): the activations are always aligned, and views sized for the
// flash path alone are refused rather than overrun. `op` names the op in the error.
bool flash_attention_runs(std::initializer_list<const void*> views, std::size_t att_numel, std::size_t scratch_numel,
                          std::size_t materialised_att, std::size_t materialised_scratch, const char* op);
// Backward on the flash path also needs its gradients' and scratch's bases 16-byte aligned.
void require_flash_backward_aligned(std::initializer_list<const void*> views, const char* op);

}  // namespace zt::models::cuda
