#include "models/layers/swiglu.h"

#include <cmath>
#include <cstddef>

namespace zt::models::cpu {

namespace {
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
}  // namespace

void swiglu_forward(float* out, const float* gu, int N, int I) {
  for (int n = 0; n < N; ++n) {
    const float* gate = gu + static_cast<std::size_t>(n) * 2 * I;
    const float* up = gate + I;
    float* o = out + static_cast<std::size_t>(n) * I;
    for (int i = 0; i < I; ++i) o[i] = gate[i] * sigmoid(gate[i]) * up[i];
  }
}

void swiglu_backward(float* dgu, const float* dout, const float* gu, int N, int I) {
  for (int n = 0; n < N; ++n) {
    const float* gate = gu + static_cast<std::size_t>(n) * 2 * I;
    const float* up = gate + I;
    const float* d = dout + static_cast<std::size_t>(n) * I;
    float* dgate = dgu + static_cast<std::size_t>(n) * 2 * I;
    float* dup = dgate + I;
    for (int i = 0; i < I; ++i) {
      const float s = sigmoid(gate[i]);
      const float silu = gate[i] * s;
      dgate[i] = d[i] * up[i] * s * (1.0f + gate[i] * (1.0f - s));
      dup[i] = d[i] * silu;
    }
  }
}

}  // namespace zt::models::cpu
