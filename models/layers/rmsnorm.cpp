#include "models/layers/rmsnorm.h"

#include <cmath>

namespace zt::models::cpu {

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int rows, int C, float eps,
                     RowGroups groups) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t at = groups.offset(r, C);
    const float* x = inp + at;
    float* o = out + at;
    double ss = 0.0;  // in double: the reference should not be what loses precision
    for (int c = 0; c < C; ++c) ss += static_cast<double>(x[c]) * x[c];
    float s = static_cast<float>(1.0 / std::sqrt(ss / C + eps));
    for (int c = 0; c < C; ++c) o[c] = weight[c] * (x[c] * s);
    rstd[r] = s;
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                      const float* rstd, int rows, int C, RowGroups groups, bool accumulate) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t at = groups.offset(r, C);
    const float* x = inp + at;
    const float* d = dout + at;
    float* dx = dinp + at;
    const float s = rstd[r];
    // With xhat = x * s and g = dout * weight:  dx = s * (g - xhat * mean(g * xhat)).
    double gx = 0.0;
    for (int c = 0; c < C; ++c) gx += static_cast<double>(d[c]) * weight[c] * (x[c] * s);
    const float gx_mean = static_cast<float>(gx / C);
    for (int c = 0; c < C; ++c) {  // reads d[c] before writing dx[c]: dx may alias d
      float xhat = x[c] * s;
      float g = d[c] * weight[c];
      dweight[c] += d[c] * xhat;
      float v = s * (g - xhat * gx_mean);
      dx[c] = accumulate ? dx[c] + v : v;
    }
  }
}

}  // namespace zt::models::cpu
