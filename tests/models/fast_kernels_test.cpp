// The fast CPU kernels (what the model calls through cpu::) against the simple reference
// implementations (cpu::reference), on awkward shapes (sequence lengths that are not a multiple
// of the attention tile, odd lengths that leave SIMD remainders) with 1 and 3 BLAS threads. Tolerances are relative to the values' size and far above any BLAS's rounding (the
// reference and the fast attention run different product shapes), far below any real mistake.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gradcheck.h"
#include "models/ops/attention.h"
#include "models/ops/gelu.h"
#include "models/cpu/fast_math.h"
#include "models/ops/layernorm.h"
#include "models/ops/linear.h"
#include "models/ops/softmax_xent.h"
#include "optim/adamw.h"
#include "core/cpu_kernel_choice.h"
#include "core/dtype.h"
#include "models/compute_context.h"

namespace zt::models::test {
namespace {

constexpr double kTol = 2e-5;

void expect_close(const std::vector<float>& fast, const std::vector<float>& ref, const char* what, double tol = kTol) {
  ASSERT_EQ(fast.size(), ref.size());
  double scale = 1e-30;
  for (float r : ref) scale = std::max(scale, static_cast<double>(std::abs(r)));
  double worst = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_TRUE(std::isfinite(fast[i])) << what << "[" << i << "]";
    worst = std::max(worst, std::abs(static_cast<double>(fast[i]) - ref[i]) / (scale + std::abs(ref[i])));
  }
  EXPECT_LE(worst, tol) << what << ": largest difference relative to the values' size";
}

class FastKernels : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { cpu::set_compute_threads(GetParam()); }
  void TearDown() override { cpu::set_compute_threads(1); }
};

TEST_P(FastKernels, AttentionForwardAndBackward) {
  for (int T : {1, 31, 45, 64, 100}) {
    const int B = 2, NH = 3, C = 24;
    auto qkv = random_vector(static_cast<std::size_t>(B) * T * 3 * C, 10 + T, 2.0f);
    auto dout = random_vector(static_cast<std::size_t>(B) * T * C, 20 + T);
    std::vector<float> out(B * T * C), att(B * NH * T * T, 7.0f), out_ref(out.size()), att_ref(att.size(), 7.0f);
    cpu::attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    cpu::reference::attention_forward(out_ref.data(), att_ref.data(), qkv.data(), B, T, C, NH);
    expect_close(out, out_ref, "out");
    expect_close(att, att_ref, "att (zero above the diagonal in both)");
    std::vector<float> dqkv(qkv.size(), 5.0f), dqkv_ref(qkv.size(), 5.0f), scratch(T * T), scratch_ref(T * T);
    cpu::attention_backward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH);
    cpu::reference::attention_backward(dqkv_ref.data(), scratch_ref.data(), dout.data(), qkv.data(), att_ref.data(), B,
                                       T, C, NH);
    expect_close(dqkv, dqkv_ref, "dqkv");
  }
}

// The fused bias + GELU against the unfused composition: the bias added in a pass of its own, then
// the element-wise reference GELU; backward the reference GELU' and then the column sums.
TEST_P(FastKernels, BiasGeluForwardAndBackward) {
  for (auto [N, OC] : {std::pair{211, 333}, std::pair{1, 7}, std::pair{5, 1}}) {  // odd: SIMD remainders
    const std::size_t n = static_cast<std::size_t>(N) * OC;
    auto xw = random_vector(n, 3, 6.0f), bias = random_vector(OC, 30, 0.5f), d = random_vector(n, 4);
    if (n > 4) xw[0] = 0.0f, xw[1] = 40.0f, xw[2] = -40.0f, xw[3] = 1e-6f;
    std::vector<float> pre = xw, y(n), pre_ref = xw, y_ref(n);
    cpu::bias_gelu_forward(y.data(), pre.data(), bias.data(), N, OC);
    for (std::size_t i = 0; i < n; ++i) pre_ref[i] += bias[i % OC];
    cpu::reference::gelu_forward(y_ref.data(), pre_ref.data(), n);
    EXPECT_EQ(pre, pre_ref) << "the saved pre-activation is x W^T + b exactly";
    expect_close(y, y_ref, "gelu");

    // dbias accumulates onto what is there; dpre overwrites, here in place over dout.
    auto db = random_vector(OC, 31), db_ref = db;
    std::vector<float> dpre = d, dpre_ref(n);
    cpu::gelu_bias_backward(dpre.data(), db.data(), pre_ref.data(), dpre.data(), N, OC);
    cpu::reference::gelu_backward(dpre_ref.data(), pre_ref.data(), d.data(), n);
    for (std::size_t i = 0; i < n; ++i) db_ref[i % OC] += dpre_ref[i];
    expect_close(dpre, dpre_ref, "gelu backward");
    expect_close(db, db_ref, "dbias");
  }
}

// The fused residual + LayerNorm against the residual add followed by the reference LayerNorm,
// with mid apart from and aliasing its inputs.
TEST_P(FastKernels, ResidualLayerNormForward) {
  for (auto [N, C] : {std::pair{203, 77}, std::pair{3, 1}, std::pair{1, 513}}) {
    const std::size_t n = static_cast<std::size_t>(N) * C;
    auto a = random_vector(n, 40, 3.0f), b = random_vector(n, 41), w = random_vector(C, 42), bias = random_vector(C, 43);
    for (int c = 0; c < C; ++c) a[c] += 100.0f;  // a row far from zero mean
    std::vector<float> mid(n), y(n), m(N), r(N), mid_ref(n), y_ref(n), m_ref(N), r_ref(N);
    for (std::size_t i = 0; i < n; ++i) mid_ref[i] = a[i] + b[i];
    cpu::reference::layernorm_forward(y_ref.data(), m_ref.data(), r_ref.data(), mid_ref.data(), w.data(), bias.data(),
                                      N, C);
    cpu::residual_layernorm_forward(mid.data(), y.data(), m.data(), r.data(), a.data(), b.data(), w.data(),
                                    bias.data(), N, C);
    EXPECT_EQ(mid, mid_ref) << "mid = a + b exactly";
    expect_close(y, y_ref, "layernorm", 1e-4);  // float vs double statistics of the offset row
    expect_close(r, r_ref, "rstd", 1e-4);
    expect_close(m, m_ref, "mean");
    std::vector<float> in_place = b;  // mid aliasing b
    cpu::residual_layernorm_forward(in_place.data(), y.data(), m.data(), r.data(), a.data(), in_place.data(),
                                    w.data(), bias.data(), N, C);
    EXPECT_EQ(in_place, mid_ref);
  }
}

TEST_P(FastKernels, LayerNormForwardAndBackward) {
  const int N = 203, C = 77;
  auto x = random_vector(N * C, 5, 3.0f), w = random_vector(C, 6), b = random_vector(C, 7), d = random_vector(N * C, 8);
  for (int c = 0; c < C; ++c) x[c] += 100.0f;  // a row far from zero mean
  std::vector<float> y(N * C), y_ref(N * C), m(N), m_ref(N), r(N), r_ref(N);
  cpu::layernorm_forward(y.data(), m.data(), r.data(), x.data(), w.data(), b.data(), N, C);
  cpu::reference::layernorm_forward(y_ref.data(), m_ref.data(), r_ref.data(), x.data(), w.data(), b.data(), N, C);
  expect_close(y, y_ref, "layernorm", 1e-4);  // float vs double statistics of the offset row
  expect_close(m, m_ref, "mean");
  expect_close(r, r_ref, "rstd", 1e-4);
  // Backward accumulates: start from the same non-zero gradients.
  auto dx = random_vector(N * C, 9), dw = random_vector(C, 10), db = random_vector(C, 11);
  auto dx_ref = dx, dw_ref = dw, db_ref = db;
  cpu::layernorm_backward(dx.data(), dw.data(), db.data(), d.data(), x.data(), w.data(), m_ref.data(), r_ref.data(), N,
                          C);
  cpu::reference::layernorm_backward(dx_ref.data(), dw_ref.data(), db_ref.data(), d.data(), x.data(), w.data(),
                                     m_ref.data(), r_ref.data(), N, C);
  expect_close(dx, dx_ref, "dinp", 1e-4);
  expect_close(dw, dw_ref, "dweight", 1e-4);
  expect_close(db, db_ref, "dbias", 1e-4);
}

TEST_P(FastKernels, SoftmaxCrossEntropy) {
  const int N = 97, V = 301, Vp = 320;
  auto logits = random_vector(N * Vp, 12, 8.0f);
  std::vector<std::int32_t> targets(N);
  for (int n = 0; n < N; ++n) targets[n] = n % 11 == 3 ? cpu::kIgnoreIndex : (n * 37) % V;
  std::vector<float> loss(N), loss_ref(N);
  EXPECT_EQ(cpu::softmax_xent_forward(loss.data(), logits.data(), targets.data(), N, V, Vp),
            cpu::reference::softmax_xent_forward(loss_ref.data(), logits.data(), targets.data(), N, V, Vp));
  expect_close(loss, loss_ref, "losses");
  std::vector<float> dl(N * Vp, 3.0f), dl_ref(N * Vp, 3.0f);
  cpu::softmax_xent_backward(dl.data(), logits.data(), targets.data(), 0.25f, N, V, Vp);
  cpu::reference::softmax_xent_backward(dl_ref.data(), logits.data(), targets.data(), 0.25f, N, V, Vp);
  expect_close(dl, dl_ref, "dlogits");
  // In place (dlogits aliasing logits), as the model calls it.
  auto inplace = logits;
  cpu::softmax_xent_backward(inplace.data(), inplace.data(), targets.data(), 0.25f, N, V, Vp);
  expect_close(inplace, dl_ref, "dlogits in place");
}

// The fused classifier (a training step's loss block): the losses and the gradient written over
// the logits, bit for bit those of the forward and then the backward in place, with the fast
// kernels and with the references.
TEST(FusedClassifier, IsTheForwardThenTheBackwardBitForBit) {
  const int N = 53, V = 301, Vp = 320;
  const auto logits = random_vector(N * Vp, 13, 8.0f);
  std::vector<std::int32_t> targets(N);
  for (int n = 0; n < N; ++n) targets[n] = n % 7 == 2 ? cpu::kIgnoreIndex : (n * 41) % V;
  for (bool reference : {false, true}) {
    SCOPED_TRACE(reference ? "reference kernels" : "fast kernels");
    zt::set_reference_cpu_kernels(reference);
    std::vector<float> loss(N, 7.0f), loss_two(N, 7.0f);
    auto fused = logits, two = logits;
    const int count = cpu::softmax_xent_forward_backward(loss.data(), fused.data(), targets.data(), 0.125f, N, V, Vp);
    EXPECT_EQ(count, cpu::softmax_xent_forward(loss_two.data(), two.data(), targets.data(), N, V, Vp));
    cpu::softmax_xent_backward(two.data(), two.data(), targets.data(), 0.125f, N, V, Vp);
    EXPECT_EQ(loss, loss_two);
    EXPECT_EQ(fused, two);
  }
  zt::set_reference_cpu_kernels(false);
}

// Through the ops, in every storage dtype: classifier_forward with the loss gradient, then a
// backward that does nothing, against the unfused pair; a backward given another gradient than
// the forward used is refused.
TEST(FusedClassifier, OpsInEveryDtypeAndTheBackwardChecksItsGradient) {
  const int N = 24, V = 40, Vp = 48;
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    auto ctx = ComputeContext::cpu(1, dt);
    auto values = random_vector(N * Vp, 14, 4.0f);
    auto stored = [&] {
      Buffer b(Device::cpu(), dt, values.size(), MemCategory::workspace);
      convert_host(values.data(), DType::f32, b.data(), dt, values.size());
      return b;
    };
    Buffer fused = stored(), two = stored();
    Buffer targets(Device::cpu(), DType::i32, N, MemCategory::workspace);
    for (int n = 0; n < N; ++n) targets.data_as<std::int32_t>()[n] = n % 5 == 1 ? -1 : (n * 7) % V;
    Buffer loss(Device::cpu(), DType::f32, N, MemCategory::workspace), loss_two(Device::cpu(), DType::f32, N,
                                                                               MemCategory::workspace);
    ops::classifier_forward(*ctx, loss.view(), fused.view(), targets.view(), 0.5f, N, V, Vp);
    ops::classifier_backward(*ctx, fused.view(), targets.view(), 0.5f, 0.5f, N, V, Vp);
    ops::classifier_forward(*ctx, loss_two.view(), two.view(), targets.view(), std::nullopt, N, V, Vp);
    ops::classifier_backward(*ctx, two.view(), targets.view(), std::nullopt, 0.5f, N, V, Vp);
    EXPECT_EQ(std::memcmp(loss.data(), loss_two.data(), loss.bytes()), 0);
    EXPECT_EQ(std::memcmp(fused.data(), two.data(), fused.bytes()), 0);
    EXPECT_THROW(ops::classifier_backward(*ctx, fused.view(), targets.view(), 0.5f, 0.25f, N, V, Vp),
                 std::logic_error);
  }
}

TEST_P(FastKernels, AdamWMatchesTheScalarFormula) {
  const std::size_t n = 100003;
  auto p = random_vector(n, 13), m = random_vector(n, 14, 0.1f), g = random_vector(n, 15), v = random_vector(n, 16);
  for (float& x : v) x = x * x;
  auto p_ref = p, m_ref = m, v_ref = v;
  AdamWStep step{.master = p.data(), .exp_avg = m.data(), .exp_avg_sq = v.data(), .grad = g.data(), .count = n,
                 .step = 7, .grad_multiplier = 0.5f, .hyper = {.lr = 1e-2f, .weight_decay = 0.1f}};
  adamw_step_host(step);
  const AdamWHyper h = step.hyper;
  const double bc1 = 1.0 - std::pow(0.9, 7.0), bc2 = 1.0 - std::pow(static_cast<double>(h.beta2), 7.0);
  for (std::size_t i = 0; i < n; ++i) {  // the update in double, as documented in optim/adamw.h
    double gi = g[i] * 0.5, mi = m_ref[i] + (1.0 - h.beta1) * (gi - m_ref[i]);
    double vi = h.beta2 * static_cast<double>(v_ref[i]) + (1.0 - h.beta2) * gi * gi;
    double pi = p_ref[i] * (1.0 - static_cast<double>(h.lr) * h.weight_decay);
    pi -= h.lr / bc1 * mi / (std::sqrt(vi) / std::sqrt(bc2) + h.eps);
    m_ref[i] = static_cast<float>(mi), v_ref[i] = static_cast<float>(vi), p_ref[i] = static_cast<float>(pi);
  }
  expect_close(p, p_ref, "master weights", 1e-6);
  expect_close(m, m_ref, "exp_avg", 1e-6);
  expect_close(v, v_ref, "exp_avg_sq", 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Threads, FastKernels, ::testing::Values(1, 3),
                         [](const ::testing::TestParamInfo<int>& info) { return std::to_string(info.param) + "threads"; });

TEST(ReferenceKernels, TheSwitchRunsTheReferenceThroughTheSameEntryPoints) {
  const int N = 16, OC = 256;
  const std::size_t n = static_cast<std::size_t>(N) * OC;
  auto x = random_vector(n, 21, 4.0f), zero_bias = std::vector<float>(OC, 0.0f);
  std::vector<float> y(n), y_ref(n), pre = x;
  cpu::reference::gelu_forward(y_ref.data(), x.data(), n);
  zt::set_reference_cpu_kernels(true);
  cpu::bias_gelu_forward(y.data(), pre.data(), zero_bias.data(), N, OC);
  zt::set_reference_cpu_kernels(false);
  EXPECT_EQ(y, y_ref) << "bitwise: the same code ran";
  cpu::bias_gelu_forward(y.data(), pre.data(), zero_bias.data(), N, OC);
  EXPECT_NE(y, y_ref) << "the fast tanh rounds differently somewhere in 4096 values";
}

// The other fused entry points under the switch: bitwise the unfused reference composition.
TEST(ReferenceKernels, FusedEntryPointsRunTheReferenceComposition) {
  const int N = 9, C = 33;
  const std::size_t n = static_cast<std::size_t>(N) * C;
  auto x = random_vector(n, 50, 3.0f), d = random_vector(n, 51), bias = random_vector(C, 52);
  auto a = random_vector(n, 53), w = random_vector(C, 54);
  std::vector<float> dpre(n), db(C, 0.5f), dpre_ref(n), db_ref(C, 0.5f);
  cpu::reference::gelu_backward(dpre_ref.data(), x.data(), d.data(), n);
  for (std::size_t i = 0; i < n; ++i) db_ref[i % C] += dpre_ref[i];
  std::vector<float> mid(n), y(n), m(N), r(N), mid_ref(n), y_ref(n), m_ref(N), r_ref(N);
  for (std::size_t i = 0; i < n; ++i) mid_ref[i] = a[i] + x[i];
  cpu::reference::layernorm_forward(y_ref.data(), m_ref.data(), r_ref.data(), mid_ref.data(), w.data(), bias.data(),
                                    N, C);
  zt::set_reference_cpu_kernels(true);
  cpu::gelu_bias_backward(dpre.data(), db.data(), x.data(), d.data(), N, C);
  cpu::residual_layernorm_forward(mid.data(), y.data(), m.data(), r.data(), a.data(), x.data(), w.data(), bias.data(),
                                  N, C);
  zt::set_reference_cpu_kernels(false);
  EXPECT_EQ(dpre, dpre_ref);
  EXPECT_EQ(db, db_ref);
  EXPECT_EQ(mid, mid_ref);
  EXPECT_EQ(y, y_ref);
  EXPECT_EQ(m, m_ref);
  EXPECT_EQ(r, r_ref);
}

TEST(ComputeThreads, SetsOpenBlasThreads) {
  cpu::set_compute_threads(3);
  EXPECT_EQ(cpu::blas_threads(), 3);
  cpu::set_compute_threads(0);  // clamped
  EXPECT_EQ(cpu::blas_threads(), 1);
}

// Non-finite inputs reach the kernels when a run diverges (and in the engine's overflow tests):
// they must come out non-finite or clamped, without undefined behaviour (the sanitizer build
// runs this too).
TEST(FastMath, ExpOfNonFiniteInputs) {
  EXPECT_TRUE(std::isnan(cpu::fast::exp(std::nanf(""))));
  EXPECT_EQ(cpu::fast::exp(INFINITY), INFINITY);
  EXPECT_GE(cpu::fast::exp(-INFINITY), 0.0f);
  EXPECT_LT(cpu::fast::exp(-INFINITY), 1e-37f);
  EXPECT_NEAR(cpu::fast::exp(1.0f), std::exp(1.0f), 2e-7f * std::exp(1.0f));
}

}  // namespace
}  // namespace zt::models::test
