// GELU, tanh approximation as in GPT-2 (CPU, fp32): the fast kernels the model calls, and the
// simple reference they are tested against (cpu::reference).
#pragma once

#include <cstddef>

namespace zt::models::cpu {

// out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));  inp (N) -> out (N)
void gelu_forward(float* out, const float* inp, std::size_t n);
// dinp = dout * gelu'(inp), overwritten;  dout (N) -> dinp (N)
void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n);


namespace reference {
void gelu_forward(float* out, const float* inp, std::size_t n);
void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n);
}  // namespace reference

}  // namespace zt::models::cpu
