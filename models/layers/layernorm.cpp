#include "models/layers/layernorm.h"

#include <cmath>
#include <cstddef>

namespace zt::models::cpu {

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias,
                       int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * C;
    float* o = out + static_cast<std::size_t>(n) * C;
    // Two passes in double: the reference should not be the thing that loses precision.
    double m = 0.0;
    for (int c = 0; c < C; ++c) m += x[c];
    m /= C;
    double v = 0.0;
    for (int c = 0; c < C; ++c) v += (x[c] - m) * (x[c] - m);
    v /= C;
    float s = static_cast<float>(1.0 / std::sqrt(v + kLayerNormEps));
    float mf = static_cast<float>(m);
    for (int c = 0; c < C; ++c) o[c] = (x[c] - mf) * s * weight[c] + bias[c];
    mean[n] = mf;
    rstd[n] = s;
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * C;
    const float* d = dout + static_cast<std::size_t>(n) * C;
    float* dx = dinp + static_cast<std::size_t>(n) * C;
    float m = mean[n], s = rstd[n];
    // With xhat = (x - m) * s and g = dout * w:  dx = s * (g - mean(g) - xhat * mean(g * xhat)).
    double g_mean = 0.0, gx_mean = 0.0;
    for (int c = 0; c < C; ++c) {
      float xhat = (x[c] - m) * s;
      float g = d[c] * weight[c];
      g_mean += g;
      gx_mean += g * xhat;
    }
    g_mean /= C;
    gx_mean /= C;
    for (int c = 0; c < C; ++c) {
      float xhat = (x[c] - m) * s;
      float g = d[c] * weight[c];
      dbias[c] += d[c];
      dweight[c] += d[c] * xhat;
      dx[c] += s * (g - static_cast<float>(g_mean) - xhat * static_cast<float>(gx_mean));
    }
  }
}

}  // namespace zt::models::cpu
