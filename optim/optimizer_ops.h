// The optimizer's device work, ordered on a stream: the fused AdamW update of a shard range and
// the statistics of a step (gradient norm, overflow, mean loss) that the ranks all-reduce.
// optimizer_ops(device) picks the CPU or the CUDA implementation; a build without CUDA refuses the
// latter with the error of core/no_cuda.cpp.
#pragma once

#include <cstddef>

#include "core/buffer.h"
#include "core/stream.h"
#include "optim/adamw.h"

namespace zt {

// The step statistics buffer (f32 elements). Elements [0, reduced) are summed across ranks by the
// step's one all-reduce; the host reads the whole buffer once per step, after it.
namespace step_stats {
inline constexpr std::size_t sum_of_squares = 0;        // the shard's squared L2 norm, as f32
inline constexpr std::size_t non_finite = 1;            // 1 when a gradient element is inf or NaN
inline constexpr std::size_t loss = 2;                  // mean loss over the step's micro-batches
inline constexpr std::size_t sigterm = 3;               // 1 when this rank received SIGTERM
inline constexpr std::size_t sigint = 4;                // 1 when this rank received SIGINT
inline constexpr std::size_t reduced = 5;
inline constexpr std::size_t exact_sum_of_squares = 6;  // f64 in two elements: the norm unrounded
inline constexpr std::size_t loss_accumulator = 8;      // f64 in two elements: sum of micro-batch means
inline constexpr std::size_t size = 10;
}  // namespace step_stats

class OptimizerOps {
 public:
  virtual ~OptimizerOps() = default;
  // step's pointers are in the device's memory.
  virtual void adamw(const AdamWStep& step, Stream& stream) = 0;
  // Fills sum_of_squares, non_finite and exact_sum_of_squares from grad (f32; summed in f64 in a
  // fixed order, so repeated runs are bitwise equal) and sets loss = loss_accumulator /
  // micro_batches. scratch: step_stats_scratch_numel() f32 elements of the device.
  virtual void finish_step_stats(BufferView grad, BufferView stats, int micro_batches, BufferView scratch,
                                 Stream& stream) = 0;
};

std::size_t step_stats_scratch_numel();
OptimizerOps& optimizer_ops(Device device);
// Throws zt::UserError in a build without the CUDA backend.
OptimizerOps& cuda_optimizer_ops();

}  // namespace zt
