#include "models/cuda/fused_attention.h"

#include "models/cuda/flash_attention.h"

namespace zt::models::cuda {

void fused_attention_forward(CudaComputeContext& c, const FlashAttention& a, const void* q, const void* k,
                             const void* v, void* y, float* stats) {
  if (c.cudnn_attention().forward(a, c.dtype(), q, k, v, y, stats, c.handle())) return;
  flash_attention_forward(a, q, k, v, y, stats, c.dtype(), c.handle());
}

void fused_attention_backward(CudaComputeContext& c, const FlashAttention& a, const void* q, const void* k,
                              const void* v, const void* y, const void* dy, const float* stats, float* scratch,
                              void* dq, void* dk, void* dv) {
  if (c.cudnn_attention().backward(a, c.dtype(), q, k, v, y, dy, stats, dq, dk, dv, c.handle())) return;
  flash_attention_backward(a, q, k, v, y, dy, stats, scratch, dq, dk, dv, c.dtype(), c.handle());
}

}  // namespace zt::models::cuda
