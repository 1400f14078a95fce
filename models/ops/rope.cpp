#include "models/ops/rope.h"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <numbers>
#include <stdexcept>

#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {

std::vector<float> rope_inv_freq(int hs, double theta, const RopeScaling& scaling) {
  std::vector<float> inv(hs / 2);
  for (int i = 0; i < hs / 2; ++i)
    inv[i] = static_cast<float>(1.0 / std::pow(theta, static_cast<double>(2 * i) / hs));
  if (scaling.factor <= 0.0f) return inv;
  const double old_len = scaling.original_max_position;
  const double low_freq_wavelen = old_len / scaling.low_freq_factor;
  const double high_freq_wavelen = old_len / scaling.high_freq_factor;
  for (float& f : inv) {
    const double wavelen = 2.0 * std::numbers::pi / f;
    if (wavelen < high_freq_wavelen) continue;  // high frequencies: unchanged
    if (wavelen > low_freq_wavelen) {           // low frequencies: slowed down by the factor
      f = static_cast<float>(f / scaling.factor);
      continue;
    }
    const double smooth = (old_len / wavelen - scaling.low_freq_factor) /
                          (scaling.high_freq_factor - scaling.low_freq_factor);
    f = static_cast<float>((1.0 - smooth) * f / scaling.factor + smooth * f);
  }
  return inv;
}

void rope_forward(float* x, const float* inv_freq, int B, int T, int heads, int hs, int ld, bool inverse) {
  const int half = hs / 2;
  for (int n = 0; n < B * T; ++n) {
    const float t = static_cast<float>(n % T);
    float* row = x + static_cast<std::size_t>(n) * ld;
    for (int i = 0; i < half; ++i) {
      // The angle is rounded to fp32 before cos/sin, as transformers computes it.
      const double angle = static_cast<float>(t * inv_freq[i]);
      const float c = static_cast<float>(std::cos(angle));
      const float s = inverse ? -static_cast<float>(std::sin(angle)) : static_cast<float>(std::sin(angle));
      for (int h = 0; h < heads; ++h) {
        float* v = row + static_cast<std::size_t>(h) * hs;
        const float a = v[i], b = v[i + half];
        v[i] = a * c - b * s;
        v[i + half] = b * c + a * s;
      }
    }
  }
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

void rope(ComputeContext& ctx, BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
          bool inverse) {
  check_act(ctx, x, sz(B * T - 1, ld) + sz(heads, hs), "rope x");
  if (hs % 2 != 0 || inv_freq.size() != static_cast<std::size_t>(hs / 2))
    throw std::invalid_argument(fmt::format("rope: head size {} needs an even size and {} frequencies, got {}", hs,
                                            hs / 2, inv_freq.size()));
  if (ctx.device().is_cuda()) return on_cuda::rope(ctx, x, inv_freq, B, T, heads, hs, ld, inverse);
  cpu::Fp32Views w;
  cpu::rope_forward(w.out(x), inv_freq.data(), B, T, heads, hs, ld, inverse);
  w.store();
}

}  // namespace zt::models::ops
