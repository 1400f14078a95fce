#include "models/layers/gelu.h"

#include <cmath>

#include "models/layers/fast_math.h"

namespace zt::models::cpu {

namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;
}  // namespace

namespace reference {

void gelu_forward(float* out, const float* inp, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float x = inp[i];
    out[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
  }
}

void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float x = inp[i];
    float u = kSqrt2OverPi * (x + kCubic * x * x * x);
    float th = std::tanh(u);
    float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
    float grad = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
    dinp[i] = dout[i] * grad;
  }
}

}  // namespace reference

namespace {

// The same formulas with the vectorisable tanh.
ZT_CPU_KERNEL void gelu_forward_range(float* out, const float* inp, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    float x = inp[i];
    out[i] = 0.5f * x * (1.0f + fast::tanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
  }
}

ZT_CPU_KERNEL void gelu_backward_range(float* dinp, const float* inp, const float* dout, std::size_t begin,
                                       std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    float x = inp[i];
    float u = kSqrt2OverPi * (x + kCubic * x * x * x);
    float th = fast::tanh(u);
    float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
    float grad = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
    dinp[i] = dout[i] * grad;
  }
}

}  // namespace

void gelu_forward(float* out, const float* inp, std::size_t n) {
  if (zt::reference_cpu_kernels()) return reference::gelu_forward(out, inp, n);
  gelu_forward_range(out, inp, 0, n);
}

void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n) {
  if (zt::reference_cpu_kernels()) return reference::gelu_backward(dinp, inp, dout, n);
  gelu_backward_range(dinp, inp, dout, 0, n);
}

}  // namespace zt::models::cpu
