#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "optim/adamw.h"
#include "optim/optimizer_ops.h"
#include "optim/grad_stats.h"
#include "optim/loss_scaler.h"
#include "optim/lr_schedule.h"
#if ZT_HAVE_CUDA
#include "core/buffer.h"
#include "core/cpu_stream.h"
#include "core/cuda/cuda_stream.h"
#include "core/device.h"
#include "core/device_ops.h"
#include "tests/support/gpu_skip.h"
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
  LrSchedule s{{.type = LrSchedule::Kind::warmup_cosine, .warmup_steps = 10, .min_lr = 0.1}, 1.0, 110};
  EXPECT_DOUBLE_EQ(s.at(1), 0.1);
  EXPECT_DOUBLE_EQ(s.at(5), 0.5);
  EXPECT_DOUBLE_EQ(s.at(10), 1.0);
  EXPECT_NEAR(s.at(60), 0.55, 1e-12);  // halfway through the decay: midway between lr and min_lr
  EXPECT_DOUBLE_EQ(s.at(110), 0.1);
  EXPECT_DOUBLE_EQ(s.at(500), 0.1);  // past the end: stays at the minimum
  EXPECT_GT(s.at(30), s.at(31));
}

TEST(LrSchedule, LinearAndConstant) {
  LrSchedule linear{{.type = LrSchedule::Kind::warmup_linear, .warmup_steps = 0, .min_lr = 0.0}, 2.0, 100};
  EXPECT_DOUBLE_EQ(linear.at(50), 1.0);
  EXPECT_DOUBLE_EQ(linear.at(100), 0.0);
  LrSchedule constant{{.type = LrSchedule::Kind::constant, .warmup_steps = 0, .min_lr = 0.0}, 3e-4, 1};
  EXPECT_DOUBLE_EQ(constant.at(1), 3e-4);
  EXPECT_DOUBLE_EQ(constant.at(1000000), 3e-4);
}

// DeepSpeed's schedulers as its engine steps them: step s runs at iteration s - 2 (hand-computed;
// tests/runtime/interop/deepspeed_semantics.py holds them against DeepSpeed's own classes).
TEST(LrSchedule, DeepSpeedWarmupStartsTwoStepsLateAndWarmsOverAtLeastTwo) {
  LrSchedule warmup{{.type = LrSchedule::Kind::deepspeed_warmup, .warmup_steps = 4, .min_lr = 0.0}, 1.0, 100};
  warmup.warmup_min_lr = 0.2;
  EXPECT_DOUBLE_EQ(warmup.at(1), 0.2);  // iteration -1: the scheduler's start
  EXPECT_DOUBLE_EQ(warmup.at(2), 0.2);  // iteration 0
  EXPECT_DOUBLE_EQ(warmup.at(3), 0.2 + 0.8 * 0.25);
  EXPECT_DOUBLE_EQ(warmup.at(6), 1.0);
  EXPECT_DOUBLE_EQ(warmup.at(1000), 1.0);
  warmup.warmup_type = LrSchedule::Warmup::log;  // log(i + 1) / log(4)
  EXPECT_NEAR(warmup.at(4), 0.2 + 0.8 * std::log(3.0) / std::log(4.0), 1e-15);
  warmup.warmup_steps = 0;  // DeepSpeed warms up over at least 2 iterations
  EXPECT_NEAR(warmup.at(3), 0.2 + 0.8 * std::log(2.0) / std::log(2.0), 1e-15);

  LrSchedule decay{{.type = LrSchedule::Kind::deepspeed_warmup_decay, .warmup_steps = 2, .min_lr = 0.0}, 1.0, 12};
  EXPECT_DOUBLE_EQ(decay.at(4), 1.0);       // iteration 2 = warmup: (12 - 2) / (12 - 2)
  EXPECT_DOUBLE_EQ(decay.at(9), 0.5);       // iteration 7: (12 - 7) / 10
  EXPECT_DOUBLE_EQ(decay.at(14), 0.0);      // iteration 12: the end
  EXPECT_DOUBLE_EQ(decay.at(40), 0.0);      // past it: never negative

  LrSchedule cosine{{.type = LrSchedule::Kind::deepspeed_warmup_cosine, .warmup_steps = 2, .min_lr = 0.2}, 2.0, 12};
  EXPECT_DOUBLE_EQ(cosine.at(1), 0.0);  // WarmupCosineLR's iteration -1 is 0, not the warmup's start
  EXPECT_DOUBLE_EQ(cosine.at(2), 0.0);
  EXPECT_NEAR(cosine.at(8), 2.0 * (0.1 + 0.9 * 0.5), 1e-15);  // iteration 6: (6 - 2 + 1) / 10 of the way
  EXPECT_NEAR(cosine.at(100), 0.2, 1e-15);
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

// sum_of_squares measures parts of the gradient; finish_step_stats adds them in order, fills the
// record's members and leaves the signals and the accumulator alone.
TEST(StepStats, TheHostFillsTheRecordFromThePartsSums) {
  std::vector<float> grad = {3.0f, -4.0f, 1e-4f, 2.0f};
  DeviceStepStats record{};
  record.sigint = 1.0f;
  record.loss_accumulator = 5.0;  // three micro batches' mean losses, summed
  std::vector<float> stats(step_stats::size);
  std::memcpy(stats.data(), &record, sizeof record);
  std::vector<float> partials(2 * 2);
  CpuStream stream(CpuStream::Mode::inline_on_caller);
  auto view = [](std::vector<float>& v, std::size_t begin, std::size_t count) {
    return BufferView{v.data() + begin, count, DType::f32, Device::cpu()};
  };
  OptimizerOps& ops = optimizer_ops(Device::cpu());
  ops.sum_of_squares(view(grad, 3, 1), view(partials, 2, 2), {}, stream);  // parts in any order
  ops.sum_of_squares(view(grad, 0, 3), view(partials, 0, 2), {}, stream);
  double second;
  std::memcpy(&second, partials.data() + 2, sizeof second);
  EXPECT_EQ(second, 4.0);
  ops.finish_step_stats(view(partials, 0, 4), view(stats, 0, stats.size()), 3, stream);
  std::memcpy(&record, stats.data(), sizeof record);
  const double small = 1e-4f;
  EXPECT_EQ(record.sum_of_squares, 29.0f);                               // 1e-8 is lost in f32
  EXPECT_DOUBLE_EQ(record.exact_sum_of_squares, 25.0 + small * small + 4.0);  // and kept in f64
  EXPECT_EQ(record.non_finite, 0.0f);
  EXPECT_EQ(record.loss, static_cast<float>(5.0 / 3));
  EXPECT_EQ(record.sigint, 1.0f);
  EXPECT_EQ(record.loss_accumulator, 5.0);
  // An inf in one part makes the total non-finite; a partial is one f64 in two f32 elements.
  grad[3] = std::numeric_limits<float>::infinity();
  ops.sum_of_squares(view(grad, 3, 1), view(partials, 2, 2), {}, stream);
  ops.finish_step_stats(view(partials, 0, 4), view(stats, 0, stats.size()), 3, stream);
  std::memcpy(&record, stats.data(), sizeof record);
  EXPECT_EQ(record.non_finite, 1.0f);
  EXPECT_THROW(ops.sum_of_squares(view(grad, 0, 1), view(partials, 0, 1), {}, stream), std::invalid_argument);
  EXPECT_THROW(ops.finish_step_stats(view(partials, 0, 3), view(stats, 0, stats.size()), 3, stream),
               std::invalid_argument);
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

// As DeepSpeed's DynamicLossScaler: after an overflow, the step that follows a full window of clean
// steps doubles the scale (tests/runtime/train/loss_scale_parity.py holds a whole run against it).
TEST(LossScaler, GrowsAfterAWindowOfCleanSteps) {
  LossScaler scaler({0.0, 4, 5, 1, 1.0});
  scaler.update(true);  // scale 8, last overflow at iteration 0
  EXPECT_EQ(scaler.scale(), 8.0);
  for (int i = 0; i < 5; ++i) scaler.update(false);  // a window of clean steps
  EXPECT_EQ(scaler.scale(), 8.0);
  scaler.update(false);  // the step after it
  EXPECT_EQ(scaler.scale(), 16.0);
  for (int i = 0; i < 4; ++i) scaler.update(false);
  EXPECT_EQ(scaler.scale(), 16.0);
  scaler.update(false);  // the next window: 5 more clean steps
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
// The optimizer's device ops on a GPU against the host reference (they skip without a GPU).
Buffer on_gpu(const std::vector<float>& host, MemCategory category, MemoryTracker& tracker) {
  Buffer b(Device::cuda(0), DType::f32, host.size(), category, tracker);
  copy_now(b.view(), {const_cast<float*>(host.data()), host.size(), DType::f32, Device::cpu()});
  return b;
}
std::vector<float> to_host(const Buffer& b) {
  std::vector<float> host(b.numel());
  copy_now({host.data(), host.size(), DType::f32, Device::cpu()}, b.view());
  return host;
}

TEST(AdamWCuda, MatchesTheHostUpdate) {
  ZT_SKIP_WITHOUT_CUDA_DEVICE();
  const std::size_t n = 100003;
  std::vector<float> master = random_values(n, 7, 1.0f), m(n), v(n), grad = random_values(n, 8, 2.0f);
  MemoryTracker tracker;
  Buffer d_master = on_gpu(master, MemCategory::optimizer, tracker), d_m = on_gpu(m, MemCategory::optimizer, tracker),
         d_v = on_gpu(v, MemCategory::optimizer, tracker), d_grad = on_gpu(grad, MemCategory::grads, tracker);
  Buffer d_out(Device::cuda(0), DType::bf16, n, MemCategory::params, tracker);
  CudaStream stream(0, CudaStream::Priority::normal);
  AdamWHyper hyper{1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f};
  for (int t = 1; t <= 3; ++t) {
    AdamWStep host{master.data(), m.data(), v.data(), grad.data(), nullptr, DType::f32, n, t, 0.25f, hyper};
    adamw_step_host(host);
    AdamWStep device{d_master.data_as<float>(), d_m.data_as<float>(), d_v.data_as<float>(), d_grad.data_as<float>(),
                     d_out.data(), DType::bf16, n, t, 0.25f, hyper};
    optimizer_ops(Device::cuda(0)).adamw(device, stream);
  }
  stream.synchronize();
  std::vector<float> result = to_host(d_master);
  for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(result[i], master[i], 1e-6f * (1.0f + std::abs(master[i]))) << i;
}

TEST(StepStatsCuda, MatchTheHostAndRepeatBitwise) {
  ZT_SKIP_WITHOUT_CUDA_DEVICE();
  const std::size_t n = (1 << 20) + 17, first_part = 300001;
  std::vector<float> grad = random_values(n, 3, 1.0f);
  MemoryTracker tracker;
  Buffer d_grad = on_gpu(grad, MemCategory::grads, tracker);
  Buffer scratch(Device::cuda(0), DType::f32, step_stats_scratch_numel(), MemCategory::workspace, tracker);
  Buffer partials(Device::cuda(0), DType::f32, 2 * 2, MemCategory::workspace, tracker);
  CudaStream stream(0, CudaStream::Priority::normal);
  OptimizerOps& ops = optimizer_ops(Device::cuda(0));
  auto run = [&] {
    std::vector<float> stats(step_stats::size, 0.0f);
    DeviceStepStats record{};
    record.loss_accumulator = 3.0;  // the micro-batches' mean losses, summed
    std::memcpy(stats.data(), &record, sizeof record);
    Buffer d_stats = on_gpu(stats, MemCategory::workspace, tracker);
    ops.sum_of_squares(d_grad.slice(first_part, n - first_part), partials.slice(2, 2), scratch.view(), stream);
    ops.sum_of_squares(d_grad.slice(0, first_part), partials.slice(0, 2), scratch.view(), stream);
    ops.finish_step_stats(partials.view(), d_stats.view(), 2, stream);
    stream.synchronize();
    return to_host(d_stats);
  };
  const std::vector<float> first = run(), second = run();
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0) << "not bitwise repeatable";
  DeviceStepStats record;
  std::memcpy(&record, first.data(), sizeof record);
  const double host = grad_stats_host(grad.data(), n).sum_of_squares;
  EXPECT_NEAR(record.exact_sum_of_squares, host, 1e-9 * host);
  EXPECT_EQ(record.non_finite, 0.0f);
  EXPECT_FLOAT_EQ(record.loss, 1.5f);
  grad[n - 1] = std::numeric_limits<float>::quiet_NaN();  // one NaN in the second part
  d_grad = on_gpu(grad, MemCategory::grads, tracker);
  std::memcpy(&record, run().data(), sizeof record);
  EXPECT_EQ(record.non_finite, 1.0f);
}
#endif

}  // namespace
}  // namespace zt
