#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "optim/adamw.h"
#include "optim/grad_stats.h"
#include "optim/loss_scaler.h"
#include "optim/lr_schedule.h"
#if ZT_HAVE_CUDA
#include <cuda_runtime.h>

#include "core/buffer.h"
#include "core/cuda/cuda_check.h"
#include "core/device.h"
#endif

namespace zt {
namespace {

std::vector<float> random_values(std::size_t n, unsigned seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(rng);
  return values;
}

// Textbook AdamW in double precision: the oracle the fused fp32 update must follow.
struct ReferenceAdamW {
  std::vector<double> p, m, v;
  void step(const std::vector<float>& grad, double multiplier, const AdamWHyper& h, int t) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      double g = grad[i] * multiplier;
      p[i] *= 1.0 - static_cast<double>(h.lr) * h.weight_decay;
      m[i] = h.beta1 * m[i] + (1.0 - h.beta1) * g;
      v[i] = h.beta2 * v[i] + (1.0 - h.beta2) * g * g;
      double m_hat = m[i] / (1.0 - std::pow(static_cast<double>(h.beta1), t));
      double v_hat = v[i] / (1.0 - std::pow(static_cast<double>(h.beta2), t));
      p[i] -= h.lr * m_hat / (std::sqrt(v_hat) + h.eps);
    }
  }
};

TEST(AdamW, FollowsTheTextbookUpdateOverManySteps) {
  const std::size_t n = 4097;
  std::vector<float> master = random_values(n, 1, 1.0f), m(n, 0.0f), v(n, 0.0f);
  ReferenceAdamW reference{std::vector<double>(master.begin(), master.end()), std::vector<double>(n),
                           std::vector<double>(n)};
  AdamWHyper hyper{1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f};
  for (int t = 1; t <= 20; ++t) {
    std::vector<float> grad = random_values(n, 100 + t, 4.0f);
    AdamWStep step{master.data(), m.data(), v.data(), grad.data(), nullptr, DType::f32, n, t, 0.5f, hyper};
    adamw_step_host(step);
    reference.step(grad, 0.5, hyper, t);
  }
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(master[i], reference.p[i], 2e-6 * (1.0 + std::abs(reference.p[i])));
}

// At step 1, m_hat / sqrt(v_hat) = g / |g|: every weight moves by lr against its gradient's sign.
TEST(AdamW, FirstStepMovesEachWeightByTheLearningRate) {
  std::vector<float> master = {1.0f, 1.0f, 1.0f}, m(3), v(3), grad = {3.0f, -0.001f, 250.0f};
  std::vector<bf16> out(3);
  AdamWStep step{master.data(), m.data(), v.data(), grad.data(), out.data(), DType::bf16, 3, 1, 1.0f,
                 AdamWHyper{0.125f, 0.9f, 0.999f, 0.0f, 0.0f}};
  adamw_step_host(step);
  EXPECT_FLOAT_EQ(master[0], 0.875f);
  EXPECT_FLOAT_EQ(master[1], 1.125f);
  EXPECT_FLOAT_EQ(master[2], 0.875f);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i].bits, float_to_bf16(master[i]).bits);  // cast of the new master
}

TEST(AdamW, WeightDecayIsDecoupledFromTheGradient) {
  // Zero gradient: Adam's step is 0/(0 + eps) = 0, so only the decay moves the weight.
  std::vector<float> master = {2.0f}, m(1), v(1), grad = {0.0f};
  AdamWStep step{master.data(), m.data(), v.data(), grad.data(), nullptr, DType::f32, 1, 1, 1.0f,
                 AdamWHyper{0.1f, 0.9f, 0.999f, 1e-8f, 0.5f}};
  adamw_step_host(step);
  EXPECT_FLOAT_EQ(master[0], 2.0f * (1.0f - 0.1f * 0.5f));
}

TEST(LrSchedule, WarmupThenCosineToTheMinimum) {
  LrSchedule s{LrSchedule::Kind::warmup_cosine, 1.0, 0.1, 10, 110};
  EXPECT_DOUBLE_EQ(s.at(1), 0.1);
  EXPECT_DOUBLE_EQ(s.at(5), 0.5);
  EXPECT_DOUBLE_EQ(s.at(10), 1.0);
  EXPECT_NEAR(s.at(60), 0.55, 1e-12);  // halfway through the decay: midway between lr and min_lr
  EXPECT_DOUBLE_EQ(s.at(110), 0.1);
  EXPECT_DOUBLE_EQ(s.at(500), 0.1);  // past the end: stays at the minimum
  EXPECT_GT(s.at(30), s.at(31));
}

TEST(LrSchedule, LinearAndConstant) {
  LrSchedule linear{LrSchedule::Kind::warmup_linear, 2.0, 0.0, 0, 100};
  EXPECT_DOUBLE_EQ(linear.at(50), 1.0);
  EXPECT_DOUBLE_EQ(linear.at(100), 0.0);
  LrSchedule constant{LrSchedule::Kind::constant, 3e-4, 0.0, 0, 1};
  EXPECT_DOUBLE_EQ(constant.at(1), 3e-4);
  EXPECT_DOUBLE_EQ(constant.at(1000000), 3e-4);
  EXPECT_EQ(LrSchedule::parse_kind("warmup_linear"), LrSchedule::Kind::warmup_linear);
  EXPECT_THROW(LrSchedule::parse_kind("cosine"), std::invalid_argument);
}

TEST(GradStats, SumOfSquaresAndNonFinite) {
  std::vector<float> grad = {3.0f, -4.0f, 0.0f};
  GradStats stats = grad_stats_host(grad.data(), grad.size());
  EXPECT_DOUBLE_EQ(stats.sum_of_squares, 25.0);
  EXPECT_FALSE(stats.non_finite);
  grad[2] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(grad_stats_host(grad.data(), grad.size()).non_finite);
  grad[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(grad_stats_host(grad.data(), grad.size()).non_finite);
  grad[2] = 3e38f;  // finite, but its square overflows a float: double accumulation keeps it finite
  EXPECT_FALSE(grad_stats_host(grad.data(), grad.size()).non_finite);
}

TEST(GradStats, ClipCoefficient) {
  EXPECT_FLOAT_EQ(clip_coefficient(10.0, 1.0), static_cast<float>(1.0 / (10.0 + 1e-6)));
  EXPECT_FLOAT_EQ(clip_coefficient(0.5, 1.0), 1.0f);
  EXPECT_FLOAT_EQ(clip_coefficient(10.0, 0.0), 1.0f);  // clipping off
}

TEST(LossScaler, HysteresisDelaysTheFirstDecrease) {
  LossScaler scaler({0.0, 16, 1000, 2, 1.0});
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_TRUE(scaler.update(true));  // skipped; hysteresis absorbs the first overflow
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 32768.0);
  EXPECT_TRUE(scaler.update(true));  // hysteresis is spent until the scale grows again
  EXPECT_EQ(scaler.scale(), 16384.0);
  EXPECT_FALSE(scaler.update(false));
  EXPECT_EQ(scaler.skipped_steps(), 3);
}

TEST(LossScaler, GrowsAfterAWindowOfCleanSteps) {
  LossScaler scaler({0.0, 4, 5, 1, 1.0});
  scaler.update(true);  // scale 8, last overflow at iteration 0
  EXPECT_EQ(scaler.scale(), 8.0);
  for (int i = 0; i < 4; ++i) scaler.update(false);
  EXPECT_EQ(scaler.scale(), 8.0);
  scaler.update(false);  // the 5th clean step since the overflow
  EXPECT_EQ(scaler.scale(), 16.0);
  for (int i = 0; i < 5; ++i) scaler.update(false);
  EXPECT_EQ(scaler.scale(), 32.0);
}

TEST(LossScaler, AtTheMinimumItKeepsGoing) {
  LossScaler scaler({0.0, 1, 1000, 1, 1.0});
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), 1.0);
  EXPECT_TRUE(scaler.update(true));  // warns, does not throw
  EXPECT_EQ(scaler.scale(), 1.0);
}

TEST(LossScaler, StaticScaleNeverChangesButStillSkips) {
  LossScaler scaler({128.0, 16, 2, 2, 1.0});
  EXPECT_TRUE(scaler.update(true));
  for (int i = 0; i < 10; ++i) scaler.update(false);
  EXPECT_EQ(scaler.scale(), 128.0);
}

TEST(LossScaler, StateRoundTrips) {
  LossScaler a({0.0, 8, 3, 2, 1.0});
  a.update(true);
  a.update(false);
  LossScaler b({0.0, 8, 3, 2, 1.0});
  b.restore(a.state());
  for (bool overflow : {false, true, true, false, false, false}) EXPECT_EQ(a.update(overflow), b.update(overflow));
  EXPECT_EQ(a.scale(), b.scale());
}

#if ZT_HAVE_CUDA
TEST(AdamWCuda, MatchesTheHostUpdate) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const std::size_t n = 100003;
  std::vector<float> master = random_values(n, 7, 1.0f), m(n), v(n), grad = random_values(n, 8, 2.0f);
  MemoryTracker tracker;
  auto upload = [&](const std::vector<float>& host) {
    Buffer b(Device::cuda(0), DType::f32, n, MemCategory::optimizer, tracker);
    ZT_CUDA_CHECK(cudaMemcpy(b.data(), host.data(), n * 4, cudaMemcpyHostToDevice));
    return b;
  };
  Buffer d_master = upload(master), d_m = upload(m), d_v = upload(v), d_grad = upload(grad);
  Buffer d_out(Device::cuda(0), DType::bf16, n, MemCategory::params, tracker);
  AdamWHyper hyper{1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f};
  for (int t = 1; t <= 3; ++t) {
    AdamWStep host{master.data(), m.data(), v.data(), grad.data(), nullptr, DType::f32, n, t, 0.25f, hyper};
    adamw_step_host(host);
    AdamWStep device{d_master.data_as<float>(), d_m.data_as<float>(), d_v.data_as<float>(), d_grad.data_as<float>(),
                     d_out.data(), DType::bf16, n, t, 0.25f, hyper};
    adamw_step_cuda(device, nullptr);
  }
  std::vector<float> result(n);
  ZT_CUDA_CHECK(cudaMemcpy(result.data(), d_master.data(), n * 4, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(result[i], master[i], 1e-6f * (1.0f + std::abs(master[i]))) << i;
}

TEST(GradStatsCuda, MatchesTheHost) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const std::size_t n = 1 << 20;
  std::vector<float> grad = random_values(n, 3, 1.0f);
  MemoryTracker tracker;
  Buffer d_grad(Device::cuda(0), DType::f32, n, MemCategory::grads, tracker);
  Buffer d_acc(Device::cuda(0), DType::f32, 4, MemCategory::workspace, tracker);  // double + int, zeroed
  ZT_CUDA_CHECK(cudaMemcpy(d_grad.data(), grad.data(), n * 4, cudaMemcpyHostToDevice));
  auto* sum = static_cast<double*>(d_acc.data());
  auto* flag = reinterpret_cast<int*>(sum + 1);
  grad_stats_cuda(d_grad.data_as<float>(), n, sum, flag, nullptr);
  double device_sum = 0.0;
  int device_flag = 0;
  ZT_CUDA_CHECK(cudaMemcpy(&device_sum, sum, sizeof(double), cudaMemcpyDeviceToHost));
  ZT_CUDA_CHECK(cudaMemcpy(&device_flag, flag, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_NEAR(device_sum, grad_stats_host(grad.data(), n).sum_of_squares, 1e-9 * device_sum);
  EXPECT_EQ(device_flag, 0);
}
#endif

}  // namespace
}  // namespace zt
