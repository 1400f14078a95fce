// Finite-difference gradient checks of the Llama-family CPU reference layers (RMSNorm, RoPE,
// SwiGLU, grouped-query attention, token embedding), plus identities that pin their semantics
// (see gradcheck.h for the tolerance argument).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "gradcheck.h"
#include "models/ops/attention.h"
#include "models/ops/gqa_attention.h"
#include "models/ops/rmsnorm.h"
#include "models/ops/rope.h"
#include "models/ops/swiglu.h"
#include "models/ops/token_embedding.h"

namespace zt::models::test {
namespace {

TEST(LlamaLayerGradcheck, RMSNormAccumulatesIntoTheInputGradient) {
  const int N = 4, C = 8;
  const float eps = 1e-5f;
  auto inp = random_vector(N * C, 1, 2.0f), w = random_vector(C, 2), r = random_vector(N * C, 4);
  std::vector<float> out(N * C), rstd(N);
  auto objective = [&] {
    cpu::rmsnorm_forward(out.data(), rstd.data(), inp.data(), w.data(), N, C, eps);
    return weighted_sum(out.data(), r);
  };
  objective();
  // A known value: row 0 of the output is w * x / rms(x).
  double ss = 0;
  for (int c = 0; c < C; ++c) ss += double(inp[c]) * inp[c];
  EXPECT_NEAR(out[3], w[3] * inp[3] / std::sqrt(ss / C + eps), 1e-6);
  std::vector<float> dinp(N * C, 0.5f), dw(C);
  cpu::rmsnorm_backward(dinp.data(), dw.data(), r.data(), inp.data(), w.data(), rstd.data(), N, C, {}, true);
  for (float& d : dinp) d -= 0.5f;  // accumulated onto what was there
  expect_gradient("inp", inp, dinp, objective);
  expect_gradient("weight", w, dw, objective);
}

TEST(LlamaLayerGradcheck, RMSNormOverHeadsInsideRowsInPlace) {
  // QK-norm's placement: rows of 3 heads of 4 channels at the start of 20-wide rows.
  const int N = 3, heads = 3, hs = 4, W = 20, rows = N * heads;
  const cpu::RowGroups g{heads, W};
  auto inp = random_vector(N * W, 1, 2.0f), w = random_vector(hs, 2), r = random_vector(N * W, 3);
  std::vector<float> out(N * W, 0.0f), rstd(rows);
  for (int n = 0; n < N; ++n)
    for (int c = heads * hs; c < W; ++c) r[n * W + c] = 0.0f;  // not outputs of the norm
  auto objective = [&] {
    cpu::rmsnorm_forward(out.data(), rstd.data(), inp.data(), w.data(), rows, hs, 1e-6f, g);
    return weighted_sum(out.data(), r);
  };
  objective();
  for (int n = 0; n < N; ++n)
    for (int c = heads * hs; c < W; ++c) EXPECT_EQ(out[n * W + c], 0.0f) << "wrote outside its rows";
  std::vector<float> d = r, dw(hs);  // in place: dinp aliases dout
  cpu::rmsnorm_backward(d.data(), dw.data(), d.data(), inp.data(), w.data(), rstd.data(), rows, hs, g, false);
  expect_gradient("inp", inp, d, objective);  // the untouched columns keep r = 0 = their gradient
  expect_gradient("weight", w, dw, objective);
}

TEST(LlamaLayerGradcheck, RopeRotatesHalvesAndItsBackwardIsTheInverse) {
  const int B = 2, T = 5, heads = 3, hs = 8, ld = 30;
  const auto inv_freq = cpu::rope_inv_freq(hs, 10000.0);
  ASSERT_EQ(inv_freq.size(), 4u);
  EXPECT_FLOAT_EQ(inv_freq[0], 1.0f);
  EXPECT_FLOAT_EQ(inv_freq[1], static_cast<float>(std::pow(10000.0, -0.25)));
  auto x = random_vector(B * T * ld, 1), r = random_vector(B * T * ld, 2);
  std::vector<float> out;
  auto objective = [&] {
    out = x;
    cpu::rope_forward(out.data(), inv_freq.data(), B, T, heads, hs, ld);
    return weighted_sum(out.data(), r);
  };
  objective();
  // Hugging Face's rotate_half layout: channel i pairs with i + hs/2. Position 3, head 1, i = 1:
  const std::size_t at = 3 * ld + 1 * hs;
  const float angle = 3.0f * inv_freq[1];
  EXPECT_NEAR(out[at + 1], x[at + 1] * std::cos(angle) - x[at + 5] * std::sin(angle), 1e-6);
  EXPECT_NEAR(out[at + 5], x[at + 5] * std::cos(angle) + x[at + 1] * std::sin(angle), 1e-6);
  for (int c = heads * hs; c < ld; ++c) EXPECT_EQ(out[c], x[c]) << "columns past the heads are untouched";
  for (int c = 0; c < heads * hs; ++c) EXPECT_EQ(out[c], x[c]) << "position 0 is not rotated";
  std::vector<float> grad = r;
  cpu::rope_forward(grad.data(), inv_freq.data(), B, T, heads, hs, ld, /*inverse=*/true);
  expect_gradient("x", x, grad, objective);
  objective();  // out of the unperturbed x again
  std::vector<float> back = out;  // the inverse undoes the rotation
  cpu::rope_forward(back.data(), inv_freq.data(), B, T, heads, hs, ld, true);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(back[i], x[i], 1e-5);
}

TEST(LlamaLayerGradcheck, Llama3FrequencyScalingKeepsHighSlowsLowAndBlendsTheMiddle) {
  const int hs = 64;
  const double theta = 500000.0;
  const cpu::RopeScaling scaling{32.0f, 1.0f, 4.0f, 8192};
  const auto plain = cpu::rope_inv_freq(hs, theta), scaled = cpu::rope_inv_freq(hs, theta, scaling);
  int high = 0, low = 0, mid = 0;
  for (int i = 0; i < hs / 2; ++i) {
    const double wavelen = 2 * std::numbers::pi / plain[i];
    if (wavelen < 8192.0 / 4) {
      EXPECT_EQ(scaled[i], plain[i]) << i;
      ++high;
    } else if (wavelen > 8192.0 / 1) {
      EXPECT_FLOAT_EQ(scaled[i], plain[i] / 32.0f) << i;
      ++low;
    } else {
      EXPECT_LT(scaled[i], plain[i]) << i;
      EXPECT_GT(scaled[i], plain[i] / 32.0f) << i;
      ++mid;
    }
  }
  EXPECT_GT(high, 0);  // Llama 3.2's shape has all three regimes
  EXPECT_GT(low, 0);
  EXPECT_GT(mid, 0);
}

TEST(LlamaLayerGradcheck, SwiGLU) {
  const int N = 3, I = 7;
  auto gu = random_vector(N * 2 * I, 1, 3.0f), r = random_vector(N * I, 2);
  std::vector<float> out(N * I);
  auto objective = [&] {
    cpu::swiglu_forward(out.data(), gu.data(), N, I);
    return weighted_sum(out.data(), r);
  };
  objective();
  // silu(1) * 2 = 2 / (1 + e^-1)
  std::vector<float> one = {1.0f, 2.0f}, y(1);
  cpu::swiglu_forward(y.data(), one.data(), 1, 1);
  EXPECT_NEAR(y[0], 2.0 / (1.0 + std::exp(-1.0)), 1e-6);
  std::vector<float> dgu(N * 2 * I, 9.0f);  // overwritten
  cpu::swiglu_backward(dgu.data(), r.data(), gu.data(), N, I);
  expect_gradient("gu", gu, dgu, objective);
}

struct GqaShape {
  int NH, KV;
};

class GqaAttention : public ::testing::TestWithParam<GqaShape> {};

TEST_P(GqaAttention, Gradcheck) {
  const int B = 2, T = 5, hs = 4, NH = GetParam().NH, KV = GetParam().KV, W = (NH + 2 * KV) * hs;
  auto qkv = random_vector(B * T * W, 1, 1.5f), r = random_vector(B * T * NH * hs, 2);
  std::vector<float> out(B * T * NH * hs), att(B * NH * T * T), scratch(T * T);
  auto objective = [&] {
    cpu::gqa_attention_forward(out.data(), att.data(), qkv.data(), B, T, NH, KV, hs);
    return weighted_sum(out.data(), r);
  };
  objective();
  std::vector<float> dqkv(qkv.size(), 5.0f);  // overwritten
  cpu::gqa_attention_backward(dqkv.data(), scratch.data(), r.data(), qkv.data(), att.data(), B, T, NH, KV, hs);
  expect_gradient("qkv", qkv, dqkv, objective);
}

// Multi-head, grouped (2 query heads per kv head) and multi-query.
INSTANTIATE_TEST_SUITE_P(Shapes, GqaAttention, ::testing::Values(GqaShape{2, 2}, GqaShape{4, 2}, GqaShape{3, 1}),
                         [](const auto& info) {
                           return "NH" + std::to_string(info.param.NH) + "KV" + std::to_string(info.param.KV);
                         });

TEST(LlamaLayerGradcheck, GqaEqualsMultiHeadAttentionWithRepeatedKeysAndValues) {
  const int B = 2, T = 6, hs = 4, NH = 4, KV = 2, W = (NH + 2 * KV) * hs, C = NH * hs;
  auto qkv = random_vector(B * T * W, 1, 1.5f);
  // transformers' repeat_kv: query head h reads kv head h / (NH / KV).
  std::vector<float> mha(B * T * 3 * C);
  for (int n = 0; n < B * T; ++n)
    for (int h = 0; h < NH; ++h)
      for (int d = 0; d < hs; ++d) {
        mha[n * 3 * C + h * hs + d] = qkv[n * W + h * hs + d];
        mha[n * 3 * C + C + h * hs + d] = qkv[n * W + (NH + h / 2) * hs + d];
        mha[n * 3 * C + 2 * C + h * hs + d] = qkv[n * W + (NH + KV + h / 2) * hs + d];
      }
  std::vector<float> out(B * T * C), att(B * NH * T * T), ref(B * T * C), ref_att(B * NH * T * T);
  cpu::gqa_attention_forward(out.data(), att.data(), qkv.data(), B, T, NH, KV, hs);
  cpu::attention_forward(ref.data(), ref_att.data(), mha.data(), B, T, C, NH);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-6) << i;
}

TEST(LlamaLayerGradcheck, TokenEmbedding) {
  const int N = 6, C = 4, V = 5;
  std::vector<std::int32_t> tokens = {1, 4, 1, 0, 1, 3};  // repeats accumulate
  auto wte = random_vector(V * C, 1), r = random_vector(N * C, 3);
  std::vector<float> out(N * C);
  auto objective = [&] {
    cpu::token_embedding_forward(out.data(), tokens.data(), wte.data(), N, C);
    return weighted_sum(out.data(), r);
  };
  std::vector<float> dwte(V * C);
  cpu::token_embedding_backward(dwte.data(), r.data(), tokens.data(), N, C);
  expect_gradient("wte", wte, dwte, objective);
}

}  // namespace
}  // namespace zt::models::test
