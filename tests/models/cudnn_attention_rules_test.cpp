// The tensors cuDNN's fused attention is given (models/cuda/cudnn_attention_rules.h), checked
// without a GPU: every (b, h, t, d) they name is the element the CPU attention and the flash
// kernels read or write, inside the fused qkv rows, the output rows and the statistics.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "models/cuda/cudnn_attention_rules.h"

namespace zt::models::cuda {
namespace {

std::int64_t at(const SdpaTensor& t, std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d) {
  return b * t.stride[0] + h * t.stride[1] + s * t.stride[2] + d * t.stride[3];
}

// Qkv rows of (NH + 2 KV) hs elements per token: q heads first, then k's, then v's; the output
// rows NH hs wide. Pointers to k and v start at their first column, as the ops pass them.
FlashAttention rows(int B, int T, int NH, int KV) {
  const std::int64_t hs = kFlashHeadSize, width = (NH + 2 * KV) * hs;
  FlashAttention a;
  a.B = B, a.NH = NH, a.T = T, a.group = NH / KV;
  a.q = a.k = a.v = {T * width, hs, width};
  a.y = {T * NH * hs, hs, NH * hs};
  return a;
}

TEST(CudnnAttentionRules, HeadsInsideTheQkvRowsAndTheOutputRows) {
  struct Shape { int B, T, NH, KV; };
  for (Shape s : {Shape{2, 5, 3, 3}, Shape{3, 7, 4, 2}, Shape{1, 9, 8, 1}}) {
    const SdpaTensors t = sdpa_tensors(rows(s.B, s.T, s.NH, s.KV));
    const std::int64_t hs = kFlashHeadSize, width = (s.NH + 2 * s.KV) * hs;
    EXPECT_EQ(t.q.dim, (std::array<std::int64_t, 4>{s.B, s.NH, s.T, hs}));
    EXPECT_EQ(t.k.dim, (std::array<std::int64_t, 4>{s.B, s.KV, s.T, hs}));
    EXPECT_EQ(t.v.dim, t.k.dim);
    EXPECT_EQ(t.o.dim, t.q.dim);
    for (int b = 0; b < s.B; ++b)
      for (int h = 0; h < s.NH; ++h)
        for (int i = 0; i < s.T; ++i)
          for (int d : {0, 1, 63}) {
            const std::int64_t row = (static_cast<std::int64_t>(b) * s.T + i) * width;
            ASSERT_EQ(at(t.q, b, h, i, d), row + h * hs + d);
            ASSERT_EQ(at(t.o, b, h, i, d), (static_cast<std::int64_t>(b) * s.T + i) * s.NH * hs + h * hs + d);
            if (h < s.KV) {  // relative to k's and v's first columns
              ASSERT_EQ(at(t.k, b, h, i, d), row + h * hs + d);
              ASSERT_EQ(at(t.v, b, h, i, d), row + h * hs + d);
            }
          }
  }
}

// One float per (b, h, t) where the flash kernels keep theirs, so att's slot (sized by
// flash_attention_stats_floats) holds either, and no two rows share one.
TEST(CudnnAttentionRules, StatisticsWhereTheFlashKernelsKeepThem) {
  const int B = 3, NH = 4, T = 11;
  const SdpaTensors t = sdpa_tensors(rows(B, T, NH, 2));
  EXPECT_EQ(t.stats.dim, (std::array<std::int64_t, 4>{B, NH, T, 1}));
  std::vector<int> seen(flash_attention_stats_floats(B, NH, T), 0);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int i = 0; i < T; ++i) {
        const std::int64_t k = at(t.stats, b, h, i, 0);
        ASSERT_EQ(k, (static_cast<std::int64_t>(b) * NH + h) * T + i);
        ++seen[k];
      }
  for (int n : seen) EXPECT_EQ(n, 1);
}

TEST(CudnnAttentionRules, ScoresScaledByOneOverTheSquareRootOfTheHeadSize) {
  EXPECT_FLOAT_EQ(sdpa_scale() * sdpa_scale() * kFlashHeadSize, 1.0f);
}

}  // namespace
}  // namespace zt::models::cuda
