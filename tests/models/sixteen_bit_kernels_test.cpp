// The CPU ops in 16-bit storage (bf16, f16) against the fp32 code on the same inputs, widened.
//
// Linear's products (oneDNN on bf16 operands where the CPU has AVX512-BF16 or AMX, sgemm on
// widened operands otherwise) are held to the bound of fp32 accumulation followed by one rounding
// into the storage type. For a stored result r of y = sum of K terms t_k (the products and the
// bias or the accumulated gradient), each t_k exact (a product of two 16-bit values is exact in
// fp32), summed in fp32 in any order and rounded once:
//   |r - y| <= u16 |y| + (1 + u16) gamma_K sum |t_k|,   gamma_K = K u32 / (1 - K u32),
// with u32 = 2^-24 and u16 = 2^-8 (bf16) or 2^-11 (f16), the unit roundoffs (Higham, Accuracy and
// Stability of Numerical Algorithms, 3.1). y and sum |t_k| are computed in double. A product
// accumulated in 16-bit, a wrong transpose or a lost bias exceeds it by orders of magnitude.
//
// Every other op computes in fp32 on its widened views and rounds each stored result once, so its
// 16-bit result is the fp32 op's result on the widened inputs, rounded: equal bit for bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gradcheck.h"
#include "models/compute_context.h"
#include "models/ops/attention.h"
#include "models/ops/gelu.h"
#include "models/ops/layernorm.h"
#include "models/ops/linear.h"

namespace zt::models::test {
namespace {

// One tensor in the storage dtype and in fp32 holding the same (widened) values.
struct Tensor {
  Buffer stored, wide;
};

class SixteenBitKernels : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    dt_ = GetParam();
    ctx16_ = ComputeContext::cpu(1, dt_);
    ctx32_ = ComputeContext::cpu(1, DType::f32);
  }

  // Random values (normal, `scale`) rounded to the storage dtype; `dtype` f32 for statistics.
  Tensor make(std::size_t n, std::uint64_t seed, float scale = 1.0f, bool f32 = false) {
    std::vector<float> values = random_vector(n, seed, scale);
    DType dtype = f32 ? DType::f32 : dt_;
    Tensor t{Buffer(Device::cpu(), dtype, n, MemCategory::workspace),
             Buffer(Device::cpu(), DType::f32, n, MemCategory::workspace)};
    convert_host(values.data(), DType::f32, t.stored.data(), dtype, n);
    convert_host(t.stored.data(), dtype, t.wide.data(), DType::f32, n);
    return t;
  }
  Tensor poisoned(std::size_t n, bool f32 = false) {
    Tensor t = make(n, 0, 1.0f, f32);
    std::vector<float> nan(n, std::numeric_limits<float>::quiet_NaN());
    convert_host(nan.data(), DType::f32, t.stored.data(), t.stored.dtype(), n);
    std::memcpy(t.wide.data(), nan.data(), n * sizeof(float));
    return t;
  }

  static std::vector<float> read(const Buffer& b) {
    std::vector<float> out(b.numel());
    convert_host(b.data(), b.dtype(), out.data(), DType::f32, b.numel());
    return out;
  }

  // The 16-bit result equals the fp32 result rounded to the storage dtype, bit for bit.
  void expect_rounded_equal(const Tensor& t, const char* what) {
    std::vector<std::uint16_t> rounded(t.wide.numel());
    std::vector<float> stored = read(t.stored), wide = read(t.wide);
    if (t.stored.dtype() == DType::f32) {
      for (std::size_t i = 0; i < wide.size(); ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(stored[i]), std::bit_cast<std::uint32_t>(wide[i])) << what << "[" << i << "]";
      return;
    }
    convert_host(t.wide.data(), DType::f32, rounded.data(), dt_, rounded.size());
    const auto* bits = static_cast<const std::uint16_t*>(t.stored.data());
    for (std::size_t i = 0; i < rounded.size(); ++i) {
      ASSERT_FALSE(std::isnan(wide[i])) << what << "[" << i << "] unwritten";
      ASSERT_EQ(bits[i], rounded[i]) << what << "[" << i << "]: " << stored[i] << " vs fp32 " << wide[i];
    }
  }

  double unit_roundoff() const { return dt_ == DType::bf16 ? 0x1p-8 : 0x1p-11; }

  // Checks r (stored) against y = sum of terms, given y and sum |terms| in double and K terms.
  void expect_within_bound(float r, double y, double abs_sum, int K, const char* what, std::size_t i) {
    const double u32 = 0x1p-24, u16 = unit_roundoff();
    const double gamma = K * u32 / (1 - K * u32);
    const double bound = u16 * std::abs(y) + (1 + u16) * gamma * abs_sum;
    ASSERT_LE(std::abs(double(r) - y), bound) << what << "[" << i << "] = " << r << ", exact " << y << ", K " << K;
  }

  DType dt_ = DType::bf16;
  std::unique_ptr<ComputeContext> ctx16_, ctx32_;
};

TEST_P(SixteenBitKernels, LinearProductsAreWithinTheFp32AccumulationBound) {
  const int N = 37, IC = 96, OC = 80, ldo = 83;  // ldo > OC: padded rows, as the LM head writes them
  Tensor inp = make(static_cast<std::size_t>(N) * IC, 1), weight = make(static_cast<std::size_t>(OC) * IC, 2, 0.5f),
         bias = make(OC, 3), dout = make(static_cast<std::size_t>(N) * ldo, 4);
  Tensor out = make(static_cast<std::size_t>(N) * ldo, 5);  // the padding must survive
  std::vector<float> before = read(out.stored);
  ops::linear_forward(*ctx16_, out.stored.view(), inp.stored.view(), weight.stored.view(), bias.stored.view(), N, IC,
                      OC, ldo);
  std::vector<float> x = read(inp.stored), w = read(weight.stored), b = read(bias.stored), y = read(out.stored);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < ldo; ++o) {
      std::size_t at = static_cast<std::size_t>(n) * ldo + o;
      if (o >= OC) {
        ASSERT_EQ(y[at], before[at]) << "padding column " << o << " of row " << n << " was written";
        continue;
      }
      double exact = b[o], abs_sum = std::abs(b[o]);
      for (int i = 0; i < IC; ++i) {
        double t = double(x[n * IC + i]) * w[o * IC + i];
        exact += t;
        abs_sum += std::abs(t);
      }
      expect_within_bound(y[at], exact, abs_sum, IC + 1, "out", at);
    }

  Tensor dinp = poisoned(static_cast<std::size_t>(N) * IC), dweight = make(static_cast<std::size_t>(OC) * IC, 6, 0.1f),
         dbias = make(OC, 7, 0.1f);
  std::vector<float> dw0 = read(dweight.stored), db0 = read(dbias.stored), g = read(dout.stored);
  ops::linear_backward(*ctx16_, dinp.stored.view(), dweight.stored.view(), dbias.stored.view(), dout.stored.view(),
                       inp.stored.view(), weight.stored.view(), N, IC, OC, ldo);
  std::vector<float> dx = read(dinp.stored), dw = read(dweight.stored), db = read(dbias.stored);
  for (int n = 0; n < N; ++n)
    for (int i = 0; i < IC; ++i) {
      double exact = 0, abs_sum = 0;
      for (int o = 0; o < OC; ++o) {
        double t = double(g[static_cast<std::size_t>(n) * ldo + o]) * w[o * IC + i];
        exact += t;
        abs_sum += std::abs(t);
      }
      expect_within_bound(dx[n * IC + i], exact, abs_sum, OC, "dinp", n * IC + i);
    }
  for (int o = 0; o < OC; ++o) {
    for (int i = 0; i < IC; ++i) {
      double exact = dw0[o * IC + i], abs_sum = std::abs(exact);
      for (int n = 0; n < N; ++n) {
        double t = double(g[static_cast<std::size_t>(n) * ldo + o]) * x[n * IC + i];
        exact += t;
        abs_sum += std::abs(t);
      }
      expect_within_bound(dw[o * IC + i], exact, abs_sum, N + 1, "dweight (accumulated)", o * IC + i);
    }
    double exact = db0[o], abs_sum = std::abs(exact);
    for (int n = 0; n < N; ++n) {
      exact += g[static_cast<std::size_t>(n) * ldo + o];
      abs_sum += std::abs(g[static_cast<std::size_t>(n) * ldo + o]);
    }
    expect_within_bound(db[o], exact, abs_sum, N + 1, "dbias (accumulated)", o);
  }
}

TEST_P(SixteenBitKernels, LayerNormIsTheFp32OpRoundedOnce) {
  const int N = 29, C = 72;
  Tensor inp = make(static_cast<std::size_t>(N) * C, 11, 2.0f), weight = make(C, 12), bias = make(C, 13);
  Tensor out = poisoned(static_cast<std::size_t>(N) * C), mean = poisoned(N, true), rstd = poisoned(N, true);
  ops::layernorm_forward(*ctx16_, out.stored.view(), mean.stored.view(), rstd.stored.view(), inp.stored.view(),
                         weight.stored.view(), bias.stored.view(), N, C);
  ops::layernorm_forward(*ctx32_, out.wide.view(), mean.wide.view(), rstd.wide.view(), inp.wide.view(),
                         weight.wide.view(), bias.wide.view(), N, C);
  expect_rounded_equal(out, "out");
  expect_rounded_equal(mean, "mean");
  expect_rounded_equal(rstd, "rstd");

  Tensor dout = make(static_cast<std::size_t>(N) * C, 14), dinp = make(static_cast<std::size_t>(N) * C, 15, 0.1f),
         dweight = make(C, 16, 0.1f), dbias = make(C, 17, 0.1f);
  ops::layernorm_backward(*ctx16_, dinp.stored.view(), dweight.stored.view(), dbias.stored.view(), dout.stored.view(),
                          inp.stored.view(), weight.stored.view(), mean.stored.view(), rstd.stored.view(), N, C);
  ops::layernorm_backward(*ctx32_, dinp.wide.view(), dweight.wide.view(), dbias.wide.view(), dout.wide.view(),
                          inp.wide.view(), weight.wide.view(), mean.wide.view(), rstd.wide.view(), N, C);
  expect_rounded_equal(dinp, "dinp");
  expect_rounded_equal(dweight, "dweight");
  expect_rounded_equal(dbias, "dbias");
}

TEST_P(SixteenBitKernels, BiasGeluIsTheFp32OpRoundedOnce) {
  const int N = 23, OC = 130;
  Tensor pre = make(static_cast<std::size_t>(N) * OC, 21, 2.0f), bias = make(OC, 22);
  Tensor out = poisoned(static_cast<std::size_t>(N) * OC);
  ops::bias_gelu_forward(*ctx16_, out.stored.view(), pre.stored.view(), bias.stored.view(), N, OC);
  ops::bias_gelu_forward(*ctx32_, out.wide.view(), pre.wide.view(), bias.wide.view(), N, OC);
  expect_rounded_equal(out, "out");
  expect_rounded_equal(pre, "pre (bias added in place)");

  // Backward reads the stored (rounded) pre-activations: the fp32 side gets them widened.
  convert_host(pre.stored.data(), dt_, pre.wide.data(), DType::f32, pre.wide.numel());

  Tensor dout = make(static_cast<std::size_t>(N) * OC, 23), dpre = poisoned(static_cast<std::size_t>(N) * OC),
         dbias = make(OC, 24, 0.1f);
  ops::gelu_bias_backward(*ctx16_, dpre.stored.view(), dbias.stored.view(), pre.stored.view(), dout.stored.view(), N, OC);
  ops::gelu_bias_backward(*ctx32_, dpre.wide.view(), dbias.wide.view(), pre.wide.view(), dout.wide.view(), N, OC);
  expect_rounded_equal(dpre, "dpre");
  expect_rounded_equal(dbias, "dbias");
}

TEST_P(SixteenBitKernels, CausalAttentionIsTheFp32OpRoundedOnce) {
  const int B = 2, T = 45, C = 48, NH = 3;
  const std::size_t scratch_n = ops::attention_scratch_numel(Device::cpu(), DType::f32, B, T, C, NH);
  Tensor qkv = make(static_cast<std::size_t>(B) * T * 3 * C, 31), out = poisoned(static_cast<std::size_t>(B) * T * C),
         att = poisoned(static_cast<std::size_t>(B) * NH * T * T), scratch = make(scratch_n, 32);
  ops::attention_forward(*ctx16_, out.stored.view(), att.stored.view(), qkv.stored.view(), scratch.stored.view(), B, T,
                         C, NH);
  ops::attention_forward(*ctx32_, out.wide.view(), att.wide.view(), qkv.wide.view(), scratch.wide.view(), B, T, C, NH);
  expect_rounded_equal(out, "out");
  expect_rounded_equal(att, "att");

  // Backward reads the stored (rounded) probabilities: the fp32 side gets them widened.
  convert_host(att.stored.data(), dt_, att.wide.data(), DType::f32, att.wide.numel());
  Tensor dout = make(static_cast<std::size_t>(B) * T * C, 33), dqkv = poisoned(qkv.wide.numel());
  ops::attention_backward(*ctx16_, dqkv.stored.view(), dout.stored.view(), qkv.stored.view(), out.stored.view(),
                          att.stored.view(), scratch.stored.view(), B, T, C, NH);
  ops::attention_backward(*ctx32_, dqkv.wide.view(), dout.wide.view(), qkv.wide.view(), out.wide.view(),
                          att.wide.view(), scratch.wide.view(), B, T, C, NH);
  expect_rounded_equal(dqkv, "dqkv");
}

INSTANTIATE_TEST_SUITE_P(Storage, SixteenBitKernels, ::testing::Values(DType::bf16, DType::f16),
                         [](const ::testing::TestParamInfo<DType>& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace zt::models::test
