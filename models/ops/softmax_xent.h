// Fused softmax cross-entropy over the vocabulary (CPU, fp32): the fast kernels the model calls
// (float exponentials on the SIMD lanes), and the simple
// reference they are tested against (cpu::reference).
//
// Rows have a stride Vp >= V (a padded vocabulary for aligned GPU matrix products); the columns
// [V, Vp) are ignored in the forward and get zero gradient. A target of kIgnoreIndex (-1)
// contributes neither loss nor gradient.
#pragma once

#include <cstdint>
#include <optional>

#include "models/ops/common.h"

namespace zt::models::cpu {

inline constexpr std::int32_t kIgnoreIndex = -1;

// logits (N, Vp), targets (N) -> losses (N): -log softmax(logits[n])[targets[n]], 0 when ignored.
// Returns the number of non-ignored rows.
int softmax_xent_forward(float* losses, const float* logits, const std::int32_t* targets, int N, int V, int Vp);
// dlogits[n] = dloss * (softmax(logits[n]) - onehot(targets[n])), overwritten; dlogits may alias
// logits (each row is read before it is written). dloss is dL/dloss_n, the same for every
// non-ignored row (1 / count for a mean, times any loss scale).  -> dlogits (N, Vp)
void softmax_xent_backward(float* dlogits, const float* logits, const std::int32_t* targets, float dloss, int N, int V,
                           int Vp);
// Both in one pass over each row, as a training step's loss block does: losses as the forward,
// and the row overwritten with its gradient as the backward (logits becomes dlogits), from the
// row's maximum and sum taken once. The same values, bit for bit, as the two calls.
int softmax_xent_forward_backward(float* losses, float* logits, const std::int32_t* targets, float dloss, int N, int V,
                                  int Vp);

namespace reference {
int softmax_xent_forward(float* losses, const float* logits, const std::int32_t* targets, int N, int V, int Vp);
void softmax_xent_backward(float* dlogits, const float* logits, const std::int32_t* targets, float dloss, int N, int V,
                           int Vp);
}  // namespace reference

}  // namespace zt::models::cpu

namespace zt::models::ops {

// On a context's views: losses f32 (N), targets int32 (N), logits in the compute dtype.
void softmax_xent_forward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets, int N, int V,
                          int Vp);
void softmax_xent_backward(ComputeContext& ctx, BufferView dlogits, BufferView logits, BufferView targets, float dloss,
                           int N, int V, int Vp);
// The fused classifier: losses, and the logits overwritten with their gradient, in one pass.
void softmax_xent_forward_backward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets,
                                   float dloss, int N, int V, int Vp);

// A loss block's classifier (BlockIO::dloss_in_forward says which): in a training step's forward
// the fused classifier, whose backward then has nothing left to do; otherwise the losses, and in
// backward the logits' gradient over them. backward's dloss must be the forward's where it fused.
void classifier_forward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets,
                        std::optional<float> dloss_in_forward, int N, int V, int Vp);
void classifier_backward(ComputeContext& ctx, BufferView logits, BufferView targets,
                         std::optional<float> dloss_in_forward, float dloss, int N, int V, int Vp);

// acc (one f64 in two f32 elements) += (f32)(sum(losses) / valid), the sum taken in f64 in a
// fixed order; adds 0 when valid is 0. The batch's mean loss without a trip to the host.
void add_mean_loss(ComputeContext& ctx, BufferView acc, BufferView losses, int valid);

// The op on a CUDA context (softmax_xent.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void softmax_xent_forward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets, int N, int V,
                          int Vp);
void softmax_xent_backward(ComputeContext& ctx, BufferView dlogits, BufferView logits, BufferView targets, float dloss,
                           int N, int V, int Vp);
void softmax_xent_forward_backward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets,
                                   float dloss, int N, int V, int Vp);
void add_mean_loss(ComputeContext& ctx, BufferView acc, BufferView losses, int valid);
}  // namespace on_cuda

}  // namespace zt::models::ops
