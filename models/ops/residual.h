// Residual add (CPU reference, fp32). Its backward is the identity on both inputs, which the
// transformer block does by accumulating into the residual stream's gradient.
#pragma once

#include <cstddef>

#include "models/ops/common.h"

namespace zt::models::cpu {

// a (N), b (N) -> out (N) = a + b
void residual_forward(float* out, const float* a, const float* b, std::size_t n);

}  // namespace zt::models::cpu

namespace zt::models::ops {

// out = a + b on a context's views; out may alias a or b.
void residual_forward(ComputeContext& ctx, BufferView out, BufferView a, BufferView b);

// The op on a CUDA context (residual.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void residual_forward(ComputeContext& ctx, BufferView out, BufferView a, BufferView b);
}  // namespace on_cuda

}  // namespace zt::models::ops
