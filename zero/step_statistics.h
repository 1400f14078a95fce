// What the ranks must agree on after a step's backward, in one small all-reduce: the squared
// gradient norm, whether any rank saw inf/NaN, the loss, and which ranks received a stop signal.
//
// Everything is computed on the device into one buffer (optim/optimizer_ops.h's step_stats
// layout); the host reads it once per step, after the all-reduce, and nothing else in the step
// waits for the device. Issued before the stage 1/2 parameter all-gathers, so that it does not
// queue behind them on the comm stream.
//
// The gradient norm is summed over fixed parts of the shard (the engine's: its blocks' chunks),
// each part's sum of squares taken as soon as the part is final: while later reductions still run
// (it delays the next bucket's launch, so it is hidden only where the link is busy), where one
// pass over the whole shard after the last reduction would lie on the path to the update. The
// parts' sums are added in an order fixed by their positions, so the norm does not depend on when
// each was taken (overlap on or off, any bucket size).
#pragma once

#include <cstddef>
#include <vector>

#include "comm/communicator.h"
#include "core/buffer.h"
#include "zero/exposed_time.h"
#include "zero/timeline.h"

namespace zt {

struct AgreedStatistics {
  double sum_of_squares = 0.0;  // global squared gradient norm
  bool non_finite = false;      // some rank saw inf or NaN
  double loss = 0.0;            // mean over micro-batches and ranks
  int stop_signal = 0;          // SIGTERM over SIGINT over SIGUSR1, or 0
};

class StepStatistics {
 public:
  // parts: how many parts the gradient shard's norm is summed over.
  StepStatistics(Device device, Stream& compute, std::size_t parts, MemoryTracker& tracker);

  // Where each micro-batch adds its mean loss (one f64 in two f32 elements); zeroed by begin().
  BufferView loss_accumulator() const;
  // A step begins: no part measured yet.
  void begin();
  // Part `part` of the shard holds its final gradient `grad` for this step: its sum of squares,
  // on the compute stream. Once per part and step.
  void measure(std::size_t part, BufferView grad);
  // The statistics into the buffer (every part measured), the all-reduce (sum) across comm, one
  // read. Stage 0 ranks hold the whole gradient: whole_gradient makes rank 0 alone contribute the
  // norm, and the exact local norm is used. Waiting for the all-reduce counts as exposed
  // communication.
  AgreedStatistics agree(int micro_batches, bool whole_gradient, int local_stop_signal, Communicator& comm,
                         ExposedTime& exposed, trace::Timeline* timeline, Work& all_reduce);
  // An evaluation: the accumulated loss averaged over ranks (one forward, no gradients).
  double agree_eval_loss(Communicator& comm, trace::Timeline* timeline);

 private:
  Stream& compute_;
  Buffer stats_;     // device: the step_stats layout
  Buffer partials_;  // device: each part's sum of squares, one f64 in two f32 elements
  Buffer scratch_;   // device: the reduction's partials within a part
  Buffer host_;      // page-locked: signals going up, the statistics coming back
  std::vector<bool> measured_;
};

}  // namespace zt
