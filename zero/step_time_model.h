// A first-order prediction of a ZeRO step's time: compute from FLOPs and a rate, communication
// from the α–β model of ring collectives, and how much of it backward and forward can hide.
// What `zerotrain plan --predict` prints; pure arithmetic, no devices, no MPI.
//
// Inputs. N ranks; a link with latency α (s) and bandwidth β (bytes/s per rank); T_micro = the
// forward + backward time of one micro batch (FLOPs / rate), forward ≈ T_micro/3 and backward
// ≈ 2·T_micro/3 (a Linear layer's backward is two products, its forward one); G micro batches
// per step (gradient accumulation). The gradient buckets k = 0..K-1 in backward order (bucket
// K-1 holds block 0, so it is the last reduced and the first gathered in forward) with s_k bytes
// in the communication dtype and p_k bytes of the same elements in the compute dtype.
//
// One collective's time per rank (ring algorithms; S = the larger buffer, N = 1 costs nothing):
//   all-reduce      AR(S) = 2(N-1)·α + 2(N-1)/N · S/β
//   reduce-scatter  RS(S) =  (N-1)·α +  (N-1)/N · S/β      (S = the full input)
//   all-gather      AG(S) =  (N-1)·α +  (N-1)/N · S/β      (S = the full output)
//
// Per step: c_k = AR(s_k) at stage 0, RS(s_k) at stages 1-3; R = Σ c_k, c_last = c_{K-1};
// a_k = AG(p_k), A = Σ a_k, a_first = a_{K-1}; σ = 2(N-1)·α, the small all-reduce of the step's
// statistics (loss, gradient norm, flags) that the optimizer step waits for.
//
//   T_compute = G · T_micro
//   T_comm    = R + σ                 stage 0
//             = R + A + σ             stages 1, 2 (parameters all-gathered after the update)
//             = R + 2·G·A + σ         stage 3 (all-gathered in every forward and backward)
//
// Exposed communication with overlap (the compute thread's waits). Reductions run on one link
// during the last micro batch's backward; only the last bucket has to start after it:
//   E_reduce  = max(0, R - c_last - T_bwd) + c_last
// Stages 1/2: the parameter all-gathers overlap the next forward, except the first block's:
//   E_gather  = a_first + max(0, A - a_first - T_fwd)
// Stage 3: every forward gathers as stages 1/2 do; the backward of an accumulating micro batch
// gathers only (max(0, A - T_bwd)); the last backward shares the link between the gathers and
// the reductions:  max(0, A + R - c_last - T_bwd) + c_last.
//   exposed   = E_reduce + σ                                          stage 0
//             = E_reduce + E_gather + σ                                stages 1, 2
//             = G·E_gather + (G-1)·max(0, A - T_bwd)
//               + max(0, A + R - c_last - T_bwd) + c_last + σ          stage 3
//   step      = T_compute + exposed;   without overlap: T_compute + T_comm.
//
// What it ignores, on purpose: the optimizer step and other memory-bound work (not in the
// FLOPs), the CPU that communication takes from compute on the same cores, gradient readiness
// inside backward (early buckets are assumed ready when the link is free for them), ZeRO-3's
// persistent small blocks and prefetch limits (every block is gathered twice per micro batch),
// padding beyond what the partition plan holds, and contention between the links of more than
// one rank per host. A prediction is a floor to hold a measurement against, not a promise.
#pragma once

#include <vector>

#include "models/model.h"
#include "zero/engine_options.h"

namespace zt {

struct LinkModel {
  double latency_s = 0.0;     // α per ring step
  double bytes_per_s = 0.0;   // β, per rank and direction
};

double all_reduce_seconds(double bytes, int world_size, const LinkModel& link);
double reduce_scatter_seconds(double bytes, int world_size, const LinkModel& link);
double all_gather_seconds(double bytes, int world_size, const LinkModel& link);

struct StepTimeInputs {
  int stage = 0;
  int world_size = 1;
  int micro_batches = 1;                 // gradient accumulation steps G
  double micro_batch_compute_s = 0.0;    // T_micro: forward + backward of one micro batch
  std::vector<double> bucket_comm_bytes;     // s_k, backward order
  std::vector<double> bucket_compute_bytes;  // p_k, backward order (stages 1-3)
  LinkModel link;
};

struct StepTimePrediction {
  double compute_s = 0.0;  // T_compute
  double comm_s = 0.0;     // T_comm
  double exposed_s = 0.0;  // with overlap
  double step_s = 0.0;     // T_compute + exposed
  double step_without_overlap_s = 0.0;  // T_compute + T_comm
};

// Throws std::invalid_argument on a stage outside 0-3, world_size or micro_batches < 1, a
// negative time or latency, a bandwidth <= 0 with world_size > 1, or bucket lists of different
// lengths (stages 1-3).
StepTimePrediction predict_step_time(const StepTimeInputs& inputs);

// The inputs for options.stage: buckets from the partition plan the engine uses (stage 0: one
// rank's plan, all-reduced whole), s_k in options.comm_dtype and p_k in options.compute_dtype.
StepTimeInputs step_time_inputs(const models::Model& model, const ZeroOptions& options, int world_size,
                                double micro_batch_compute_s, const LinkModel& link);

}  // namespace zt
