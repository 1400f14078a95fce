// The tensors cuDNN's fused attention (scaled dot-product attention, models/cuda/cudnn_attention.h)
// is given for an attention the flash kernels would take, in plain C++ so that the CPU tests check
// them on machines without a GPU. cuDNN names a tensor of heads by its dims (b, h, t, d) and a
// stride per dim, which is HeadsLayout with a unit stride for d: q, k and v are read inside the
// fused qkv rows and the output written into the model's rows, with no permute, as the flash
// kernels do.
#pragma once

#include <array>
#include <cstdint>

#include "models/cuda/flash_attention_rules.h"

namespace zt::models::cuda {

struct SdpaTensor {
  std::array<std::int64_t, 4> dim{}, stride{};
};

struct SdpaTensors {
  SdpaTensor q, k, v, o;  // dO has o's layout; dq, dk, dv have q's, k's and v's
  SdpaTensor stats;       // one float per (b, h, t): the softmax statistics backward reads
};

inline SdpaTensor sdpa_heads(int B, int heads, int T, const HeadsLayout& l) {
  return {{B, heads, T, kFlashHeadSize}, {l.batch, l.head, l.row, 1}};
}

// k and v have NH / group heads (grouped-query attention); the statistics are laid out as the
// flash kernels' (flash_attention_stats_floats: (b * NH + h) * T + t), so att's slot serves both.
inline SdpaTensors sdpa_tensors(const FlashAttention& a) {
  const int kv_heads = a.NH / a.group;
  SdpaTensors s;
  s.q = sdpa_heads(a.B, a.NH, a.T, a.q);
  s.k = sdpa_heads(a.B, kv_heads, a.T, a.k);
  s.v = sdpa_heads(a.B, kv_heads, a.T, a.v);
  s.o = sdpa_heads(a.B, a.NH, a.T, a.y);
  s.stats = {{a.B, a.NH, a.T, 1}, {static_cast<std::int64_t>(a.NH) * a.T, a.T, 1, 1}};
  return s;
}

// 1 / sqrt(hs): the scores' scale, as the CPU attention and the flash kernels apply it.
inline float sdpa_scale() { return 0.125f; }  // hs 64
static_assert(kFlashHeadSize == 64, "sdpa_scale is 1 / sqrt(64)");

}  // namespace zt::models::cuda
