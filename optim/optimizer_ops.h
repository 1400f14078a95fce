// The optimizer's device work, ordered on a stream: the fused AdamW update of a shard range and
// the statistics of a step (gradient norm, overflow, mean loss) that the ranks all-reduce: the
// norm's partial sums over parts of the shard, each taken when its part is final, then added in
// an order fixed by their positions (the CPU in sequence, CUDA as a fixed tree).
// optimizer_ops(device) picks the CPU or the CUDA implementation; a build without CUDA refuses the
// latter with the error of core/no_cuda.cpp.
#pragma once

#include <cstddef>

#include "core/buffer.h"
#include "core/stream.h"
#include "optim/adamw.h"
#include "optim/step_stats.h"

namespace zt {

class OptimizerOps {
 public:
  virtual ~OptimizerOps() = default;
  // step's pointers are in the device's memory.
  virtual void adamw(const AdamWStep& step, Stream& stream) = 0;
  // The squared L2 norm of grad (f32), summed in f64 in a fixed order (repeated runs are bitwise
  // equal), into partial: one f64 held in two f32 elements of the device. scratch:
  // step_stats_scratch_numel() f32 elements of the device.
  virtual void sum_of_squares(BufferView grad, BufferView partial, BufferView scratch, Stream& stream) = 0;
  // stats holds a DeviceStepStats (step_stats.h). Fills sum_of_squares, non_finite and
  // exact_sum_of_squares from partials (sum_of_squares results, n f64 in 2n f32 elements, added in
  // an order that depends on their positions only) and sets loss = loss_accumulator / micro_batches.
  virtual void finish_step_stats(BufferView partials, BufferView stats, int micro_batches, Stream& stream) = 0;
};

// The CUDA reduction's grid: each of its blocks writes one f64 partial into the scratch.
inline constexpr std::size_t kStepStatsBlocks = 512;
std::size_t step_stats_scratch_numel();  // 2 x kStepStatsBlocks f32 elements
// Throws std::invalid_argument unless partials is `count` f64 sums held in f32 elements.
void check_partials(BufferView partials, std::size_t count);
OptimizerOps& optimizer_ops(Device device);
// Throws zt::UserError in a build without the CUDA backend.
OptimizerOps& cuda_optimizer_ops();

}  // namespace zt
