// Finite-difference gradient checks of every CPU reference layer (see gradcheck.h for the
// tolerance argument).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gradcheck.h"
#include "models/ops/attention.h"
#include "models/ops/embedding.h"
#include "models/ops/gelu.h"
#include "models/ops/layernorm.h"
#include "models/ops/linear.h"
#include "models/ops/residual.h"
#include "models/ops/softmax_xent.h"

namespace zt::models::test {
namespace {

TEST(LayerGradcheck, LayerNorm) {
  const int N = 4, C = 8;
  auto inp = random_vector(N * C, 1, 2.0f), w = random_vector(C, 2), b = random_vector(C, 3);
  auto r = random_vector(N * C, 4);
  std::vector<float> out(N * C), mean(N), rstd(N);
  auto objective = [&] {
    cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), N, C);
    return weighted_sum(out.data(), r);
  };
  objective();
  std::vector<float> dinp(N * C), dw(C), db(C);
  cpu::layernorm_backward(dinp.data(), dw.data(), db.data(), r.data(), inp.data(), w.data(), mean.data(), rstd.data(),
                          N, C);
  expect_gradient("inp", inp, dinp, objective);
  expect_gradient("weight", w, dw, objective);
  expect_gradient("bias", b, db, objective);
}

TEST(LayerGradcheck, LayerNormBackwardAccumulates) {
  const int N = 2, C = 4;
  auto inp = random_vector(N * C, 1), w = random_vector(C, 2), b = random_vector(C, 3), r = random_vector(N * C, 4);
  std::vector<float> out(N * C), mean(N), rstd(N);
  cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), N, C);
  std::vector<float> d1(N * C), w1(C), b1(C), d2(N * C, 1.0f), w2(C, 1.0f), b2(C, 1.0f);
  cpu::layernorm_backward(d1.data(), w1.data(), b1.data(), r.data(), inp.data(), w.data(), mean.data(), rstd.data(), N, C);
  cpu::layernorm_backward(d2.data(), w2.data(), b2.data(), r.data(), inp.data(), w.data(), mean.data(), rstd.data(), N, C);
  for (int i = 0; i < N * C; ++i) EXPECT_FLOAT_EQ(d2[i], d1[i] + 1.0f);
  for (int i = 0; i < C; ++i) EXPECT_FLOAT_EQ(w2[i], w1[i] + 1.0f);
}

TEST(LayerGradcheck, LinearWithBiasAndPaddedOutput) {
  const int N = 3, IC = 5, OC = 4, ldo = 6;  // ldo > OC: the padded-vocabulary layout of the LM head
  auto inp = random_vector(N * IC, 1), w = random_vector(OC * IC, 2), b = random_vector(OC, 3);
  auto r = random_vector(N * ldo, 4);
  for (int n = 0; n < N; ++n)
    for (int o = OC; o < ldo; ++o) r[n * ldo + o] = 0.0f;  // padding columns are not outputs
  std::vector<float> out(N * ldo);
  auto objective = [&] {
    cpu::linear_forward(out.data(), inp.data(), w.data(), b.data(), N, IC, OC, ldo);
    return weighted_sum(out.data(), r);
  };
  objective();
  std::vector<float> dinp(N * IC, 7.0f), dw(OC * IC), db(OC);  // dinp is overwritten
  cpu::linear_backward(dinp.data(), dw.data(), db.data(), r.data(), inp.data(), w.data(), N, IC, OC, ldo);
  expect_gradient("inp", inp, dinp, objective);
  expect_gradient("weight", w, dw, objective);
  expect_gradient("bias", b, db, objective);
}

TEST(LayerGradcheck, BiasGelu) {
  const int N = 5, OC = 9;
  auto inp = random_vector(N * OC, 1, 3.0f), bias = random_vector(OC, 3, 0.5f), r = random_vector(N * OC, 2);
  std::vector<float> pre(N * OC), out(N * OC), dinp(N * OC), dbias(OC);
  auto objective = [&] {
    pre = inp;  // the fused op adds the bias in place
    cpu::bias_gelu_forward(out.data(), pre.data(), bias.data(), N, OC);
    return weighted_sum(out.data(), r);
  };
  objective();
  cpu::gelu_bias_backward(dinp.data(), dbias.data(), pre.data(), r.data(), N, OC);
  expect_gradient("inp", inp, dinp, objective);
  expect_gradient("bias", bias, dbias, objective);
  // A known value: gelu_tanh(1) = 0.8411920 (PyTorch, approximate='tanh'), here 0.25 + bias 0.75.
  float x = 0.25f, b = 0.75f, y = 0.0f;
  cpu::bias_gelu_forward(&y, &x, &b, 1, 1);
  EXPECT_NEAR(y, 0.8411920f, 1e-6f);
}

// The fused residual + LayerNorm's gradient is LayerNorm's backward on mid, given to both inputs.
TEST(LayerGradcheck, ResidualLayerNorm) {
  const int N = 3, C = 7;
  auto a = random_vector(N * C, 1, 2.0f), b = random_vector(N * C, 4), w = random_vector(C, 5),
       bias = random_vector(C, 6), r = random_vector(N * C, 2);
  std::vector<float> mid(N * C), out(N * C), mean(N), rstd(N);
  auto objective = [&] {
    cpu::residual_layernorm_forward(mid.data(), out.data(), mean.data(), rstd.data(), a.data(), b.data(), w.data(),
                                    bias.data(), N, C);
    return weighted_sum(out.data(), r);
  };
  objective();
  std::vector<float> dmid(N * C), dw(C), db(C);
  cpu::layernorm_backward(dmid.data(), dw.data(), db.data(), r.data(), mid.data(), w.data(), mean.data(), rstd.data(),
                          N, C);
  expect_gradient("a", a, dmid, objective);
  expect_gradient("b", b, dmid, objective);
  expect_gradient("weight", w, dw, objective);
  expect_gradient("bias", bias, db, objective);
}

TEST(LayerGradcheck, CausalAttention) {
  const int B = 2, T = 5, C = 8, NH = 2;
  auto qkv = random_vector(B * T * 3 * C, 1, 1.5f), r = random_vector(B * T * C, 2);
  std::vector<float> out(B * T * C), att(B * NH * T * T), scratch(T * T);
  auto objective = [&] {
    cpu::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    return weighted_sum(out.data(), r);
  };
  objective();
  // Causality: probabilities above the diagonal are zero and every row sums to one.
  for (int row = 0; row < B * NH * T; ++row) {
    int i = row % T;
    double s = 0.0;
    for (int j = 0; j < T; ++j) {
      if (j > i) {
        EXPECT_EQ(att[row * T + j], 0.0f);
      }
      s += att[row * T + j];
    }
    EXPECT_NEAR(s, 1.0, 1e-6);
  }
  std::vector<float> dqkv(qkv.size());
  cpu::attention_backward(dqkv.data(), scratch.data(), r.data(), qkv.data(), att.data(), B, T, C, NH);
  expect_gradient("qkv", qkv, dqkv, objective);
}

TEST(LayerGradcheck, SoftmaxCrossEntropyWithIgnoreIndexAndPadding) {
  const int N = 5, V = 7, Vp = 9;
  auto logits = random_vector(N * Vp, 1, 3.0f);
  std::vector<std::int32_t> targets = {3, cpu::kIgnoreIndex, 0, 6, 2};
  std::vector<float> losses(N);
  const float dloss = 0.7f;
  auto objective = [&] {
    cpu::softmax_xent_forward(losses.data(), logits.data(), targets.data(), N, V, Vp);
    double s = 0.0;
    for (float l : losses) s += dloss * l;
    return s;
  };
  EXPECT_EQ(cpu::softmax_xent_forward(losses.data(), logits.data(), targets.data(), N, V, Vp), 4);
  EXPECT_EQ(losses[1], 0.0f);
  std::vector<float> dlogits(N * Vp);
  cpu::softmax_xent_backward(dlogits.data(), logits.data(), targets.data(), dloss, N, V, Vp);
  expect_gradient("logits", logits, dlogits, objective);  // includes padding: numeric 0 there
  // In place (dlogits aliasing logits) gives the same result.
  std::vector<float> inplace = logits;
  cpu::softmax_xent_backward(inplace.data(), inplace.data(), targets.data(), dloss, N, V, Vp);
  for (int i = 0; i < N * Vp; ++i) EXPECT_FLOAT_EQ(inplace[i], dlogits[i]);
}

TEST(LayerGradcheck, Embedding) {
  const int B = 2, T = 3, C = 4, V = 5;
  std::vector<std::int32_t> tokens = {1, 4, 1, 0, 1, 3};  // repeats accumulate
  auto wte = random_vector(V * C, 1), wpe = random_vector(T * C, 2), r = random_vector(B * T * C, 3);
  std::vector<float> out(B * T * C);
  auto objective = [&] {
    cpu::embedding_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
    return weighted_sum(out.data(), r);
  };
  std::vector<float> dwte(V * C), dwpe(T * C);
  cpu::embedding_backward(dwte.data(), dwpe.data(), r.data(), tokens.data(), B, T, C);
  expect_gradient("wte", wte, dwte, objective);
  expect_gradient("wpe", wpe, dwpe, objective);
}

TEST(LayerGradcheck, Residual) {
  std::vector<float> a = {1, 2, 3}, b = {0.5f, -2, 4}, out(3);
  cpu::residual_forward(out.data(), a.data(), b.data(), 3);
  EXPECT_EQ(out, (std::vector<float>{1.5f, 0, 7}));
}

}  // namespace
}  // namespace zt::models::test
