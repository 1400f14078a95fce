// Residual add (CPU reference, fp32). Its backward is the identity on both inputs, which the
// transformer block does by accumulating into the residual stream's gradient.
#pragma once

#include <cstddef>

namespace zt::models::cpu {

// a (N), b (N) -> out (N) = a + b
void residual_forward(float* out, const float* a, const float* b, std::size_t n);

}  // namespace zt::models::cpu
