// The step statistics: one small buffer on the compute device per engine, the step's only trip to
// the host. Who touches it, in a step's order:
//   - the loss block adds each micro batch's mean loss to loss_accumulator (ops::add_mean_loss,
//     models/ops/softmax_xent.h, given that member's two f32 elements);
//   - OptimizerOps::finish_step_stats fills the gradient norm, the non-finite flag and the loss;
//   - the engine (zero/step_statistics.cpp) copies this rank's stop signals up, all-reduces the
//     first `reduced` elements (f32, summed over ranks) and reads the whole record back once.
// The buffer is step_stats::size f32 elements holding one DeviceStepStats; the host copies it into
// the struct (memcpy) rather than aliasing floats as doubles.
#pragma once

#include <cstddef>
#include <type_traits>

namespace zt {

struct DeviceStepStats {
  // Summed across ranks by the step's one all-reduce:
  float sum_of_squares;  // the shard's squared L2 norm, rounded to f32
  float non_finite;      // 1 when a gradient element is inf or NaN
  float loss;            // mean loss over the step's micro batches
  float sigterm;         // 1 when this rank received SIGTERM
  float sigint;          // 1 when this rank received SIGINT
  float sigusr1;         // 1 when this rank received SIGUSR1 (a launcher relaying a stop)
  // This rank's own:
  double exact_sum_of_squares;  // the shard's squared norm, unrounded
  double loss_accumulator;      // the sum of the micro batches' mean losses
};

namespace step_stats {
// Positions in the buffer, in f32 elements.
inline constexpr std::size_t size = sizeof(DeviceStepStats) / sizeof(float);
inline constexpr std::size_t reduced = offsetof(DeviceStepStats, exact_sum_of_squares) / sizeof(float);
inline constexpr std::size_t signals = 3;  // sigterm, sigint, sigusr1
inline constexpr std::size_t sum_of_squares = offsetof(DeviceStepStats, sum_of_squares) / sizeof(float);
inline constexpr std::size_t sigterm = offsetof(DeviceStepStats, sigterm) / sizeof(float);
inline constexpr std::size_t loss_accumulator = offsetof(DeviceStepStats, loss_accumulator) / sizeof(float);
}  // namespace step_stats

static_assert(std::is_standard_layout_v<DeviceStepStats> && std::is_trivially_copyable_v<DeviceStepStats>);
static_assert(sizeof(DeviceStepStats) == 10 * sizeof(float), "the buffer is ten f32 elements");
static_assert(step_stats::reduced == 6, "the all-reduced members come first");
static_assert(offsetof(DeviceStepStats, sigint) == offsetof(DeviceStepStats, sigterm) + sizeof(float) &&
                  offsetof(DeviceStepStats, sigusr1) == offsetof(DeviceStepStats, sigterm) + 2 * sizeof(float),
              "the signals go up from the host in one copy");
static_assert(offsetof(DeviceStepStats, exact_sum_of_squares) % alignof(double) == 0 &&
                  offsetof(DeviceStepStats, loss_accumulator) % alignof(double) == 0,
              "the device reads and writes the doubles in place");

}  // namespace zt
