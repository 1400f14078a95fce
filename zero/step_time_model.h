// A first-order prediction of a ZeRO step's time: compute from FLOPs and a rate, communication
// from the α–β model of ring collectives, and how much of it backward and forward can hide, from
// a replay of the step's schedule block by block. What `zerotrain plan --predict` prints; pure
// arithmetic, no devices, no MPI.
//
// Inputs. N ranks; a link with latency α (s) and bandwidth β (bytes/s per rank); T_micro = the
// forward + backward time of one micro batch (models/device_time.h: each block's FLOPs over the rate,
// or its bytes over the bandwidth where that is longer), forward T_f = T_micro/3 and backward
// T_b = 2·T_micro/3 (a Linear layer's backward is two products, its forward one), shared among the
// blocks in proportion to their times (w_b); G micro batches per step (gradient accumulation). The
// gradient buckets k = 0..K-1 in launch (backward) order, of s_k bytes in the communication dtype,
// bucket k complete when the backward of block b_k ends (the earliest block with a piece in it,
// or a block tied to it that runs backward later). p_b: block b's gathered parameter, bytes of the
// compute dtype.
//
// One collective's time per rank (ring algorithms; S = the larger buffer, N = 1 costs nothing):
//   all-reduce      AR(S) = 2(N-1)·α + 2(N-1)/N · S/β
//   reduce-scatter  RS(S) =  (N-1)·α +  (N-1)/N · S/β      (S = the full input)
//   all-gather      AG(S) =  (N-1)·α +  (N-1)/N · S/β      (S = the full output)
// c_k = AR(s_k) at stage 0, RS(s_k) at stages 1-3, R = Σ c_k (with a rows exchange, its AG); a_b = AG(p_b), A = Σ a_b; σ =
// 2(N-1)·α, the small all-reduce of the step's statistics (loss, gradient norm, flags) that the
// optimizer step waits for. Reductions run once per step at stages 0/1 and after every micro
// batch at stages 2/3 (M = 1 or G of them):
//
//   T_compute = G · (T_micro + R_c) + T_opt  (T_opt: AdamW's memory traffic, models/device_time.h; 0
//                                        where the rate leaves memory out)
//   T_comm    = M·R + σ                stage 0
//             = M·R + A + σ            stages 1, 2 (parameters all-gathered after the update)
//             = M·R + G·(2A − Σ_{b held, or backward reads no parameters} a_b) + σ   stage 3
//                                        (all-gathered in every forward and backward, but the
//                                        blocks held stay gathered from forward into backward: the
//                                        last block L, the persistent blocks, and, in backward's
//                                        order, the others whose bytes with the later ones' fit
//                                        the prefetch budget)
//
// Exposed communication with overlap (the compute stream's waits), replayed on one link that runs
// collectives in the order they are issued, each as soon as it is issued and the link is free:
//   Backward: blocks run from last to first; block b starts when the one after it has finished
//     and (stage 3) its gather has ended, and runs w_b·T_b + r_b (r_b: its forward again, with
//     activation checkpointing, else 0; R_c = Σ r_b is added to T_micro in T_compute). Stage 3
//     issues a block's gather when backward reaches the block or, within the prefetch budget
//     (stage3_prefetch_bucket_size; at least the next block), when it reaches an earlier-running
//     one, so the gathers interleave with the reductions on the link as the engine's do; the
//     blocks held from forward take that budget until backward reaches them. Bucket k
//     takes a bucket buffer when its first block finishes (the reducer takes its buffers in turn),
//     once the reduction that held that buffer before has ended: until then backward waits; it
//     is issued when block b_k finishes (buckets run in the order they are issued). A tied embedding
//     exchanged as rows: its buckets are issued as the engine's reducer packs them
//     (rows_bucket_spread: those the spare bucket buffers take, at least an even share, when the
//     blocks tied to it have added their parts, the rest a few at each later block's end), and
//     one all-gather of its tokens and rows when the block after it finishes (the engine's two
//     all-gathers differ by one latency term). E_b = (the later of backward's end and the last
//     reduction's end) − (T_b + R_c).
//   Forward: blocks run from first to last; block b waits for its gather, then runs w_b·T_f.
//     E_f = forward's end − T_f.
//   Gathers are issued in the order the pass needs them: stages 1/2 each block's as soon as the
//   optimizer, which updates the blocks in forward order taking o_b of T_opt each (in proportion
//   to its part of the shard), has updated it, so the first gathers run during the rest of the
//   update; a block published in K pieces (the forward's first: publish_pieces, shard_optimizer.h)
//   gathers piece k (an all-gather of 1/K of its bytes, with the ring's latency) once piece k is
//   updated (1/K of its update); stage 3 the first block's so too before a step's first forward, a forward's others
//   when it begins (an unlimited prefetch), and backward's as above. A block tied to an earlier
//   one (GPT-2's LM head) finds it still gathered from its read earlier in the forward.
//   With a secondary partition of groups of H ranks (stage 3, zero_hpz_partition_size), a block's
//   first gather in a step is from every rank and its later ones (backward's, later forwards') a
//   ring of H ranks (within a host when H divides the ranks per host: the intra-host link;
//   otherwise some groups cross hosts and all are taken at the slower link), on the group's own
//   stream: backward's reductions no longer queue behind them, and T_comm counts a_b once and the
//   regathers at the group's rate.
//   exposed   = M·E_b + σ                 stage 0
//             = M·E_b + E_f + σ           stages 1, 2
//             = G·E_b + E_f' + (G−1)·E_f + σ   stage 3 (E_f': the first forward, its first
//                                        gather issued during the update)
//   step      = T_compute + exposed.
//   Without overlap (overlap_comm false, which concerns the reductions only): each reduction runs
//   after backward and is waited for, the parameter gathers go as with overlap (without
//   reductions on the link):
//   step_off  = T_compute + M·R + σ                                  stage 0
//             = T_compute + M·R + E_f + σ                            stages 1, 2
//             = T_compute + G·(R + E_b⁰) + E_f' + (G−1)·E_f + σ      stage 3 (E_b⁰: E_b with
//                                        its gathers only)
// So what no schedule can hide shows: the buckets of the first blocks (ready only when backward
// ends) and the part of the first block's gather that the rest of the update does not cover.
//
// What it ignores, on purpose: memory-bound work other than AdamW (not in the FLOPs), the CPU
// that communication takes from compute on the same cores, a block's gradient being ready before
// its whole backward ends, ZeRO-3's persistent small blocks (gathered in every forward here; only
// their hold into backward is modelled), its prefetch budget in forward (and the gathers for
// backward it issues during forward's last blocks, beyond those held),
// padding beyond what the partition plan holds,
// tree reductions, and contention between several rings on one host's link: with ranks placed
// host by host a flat ring crosses each host's link once per direction (LinkModel::ranks_per_host).
// The two-level all-gather is modelled (LinkModel::two_level_all_gather) as one collective on the
// link, its step within the host included, where the code lets that step overlap the next
// reductions (it uses the link within the host).
// A prediction is a floor to hold a measurement against, not a promise.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "models/device_time.h"
#include "models/model.h"
#include "zero/engine_options.h"

namespace zt {

struct LinkModel {
  double latency_s = 0.0;     // α per ring step (between hosts, when ranks_per_host > 1)
  double bytes_per_s = 0.0;   // β, per rank and direction (between hosts, when ranks_per_host > 1)
  // Several ranks per host, placed host by host: the link between ranks of one host (0: as above).
  // A ring within one host runs at it; a ring that crosses hosts moves every step over both kinds
  // of edge at once, so each step takes the slower link's time (the larger α, the smaller β).
  int ranks_per_host = 1;
  double intra_latency_s = 0.0;
  double intra_bytes_per_s = 0.0;
  // All-gathers in two levels (comm/two_level_all_gather.h) where 1 < ranks_per_host < world and
  // it divides the world: H-1 steps across hosts, each host's link carrying its L ranks' chunks,
  // then H all-gathers of L ranks within each host.
  bool two_level_all_gather = false;
};

double all_reduce_seconds(double bytes, int world_size, const LinkModel& link);
double reduce_scatter_seconds(double bytes, int world_size, const LinkModel& link);
double all_gather_seconds(double bytes, int world_size, const LinkModel& link);

struct StepTimeInputs {
  int stage = 0;
  int world_size = 1;
  int micro_batches = 1;                 // gradient accumulation steps G
  double micro_batch_compute_s = 0.0;    // T_micro: forward + backward of one micro batch
  double optimizer_s = 0.0;              // T_opt: the AdamW step over this rank's shard, once per step
  // The gradient norm's passes over the shard's blocks (zero/step_statistics.h): those of blocks
  // whose reductions land only when backward ends lie before T_opt (statistics_s); the last micro
  // batch runs the others when the buffer of the block's last bucket k is taken for a later bucket,
  // before that one is issued (bucket_statistics_s[k]; empty: none).
  double statistics_s = 0.0;
  std::vector<double> bucket_statistics_s;
  // Each block's share of T_opt, blocks in forward order (the order the optimizer updates them);
  // empty: every block's new parameters go out when the whole update ends.
  std::vector<double> block_optimizer_share;
  // How many pieces stages 1-3 update and publish each block in (empty: one each).
  std::vector<std::size_t> block_publish_pieces;
  std::vector<double> block_compute_share;     // w_b, blocks in forward order; they sum to 1
  std::vector<double> bucket_comm_bytes;       // s_k, launch order
  std::vector<std::size_t> bucket_ready_block;  // b_k
  // The share of b_k's backward after which bucket k is complete (empty: 1 for every bucket, its
  // end): a tied gradient completed before its user's backward ends (Block::tied_grads_done_share).
  std::vector<double> bucket_ready_share;
  // The block whose backward's end gives bucket k its first piece, when it takes a bucket buffer
  // (empty: b_k; a bucket spanning two blocks takes it when the later one ends).
  std::vector<std::size_t> bucket_first_block;
  std::vector<double> block_gather_bytes;      // p_b (stages 1-3)
  // Stage 3 only; empty means every block: whether a block's backward reads its own parameters
  // (the embeddings' do not: no gather). A block tied to another finds that one still gathered
  // from its own read earlier in the forward (param_gatherer.h): no gather of its own.
  std::vector<bool> block_backward_reads_params;
  // Stage 3 only; empty means none: blocks of at most stage3_param_persistence_threshold elements,
  // which ParamGatherer gathers once per optimizer step and keeps. Here they are gathered in every
  // forward like the others; what is modelled is that backward finds them held and that they take
  // none of the prefetch budget.
  std::vector<bool> block_persistent;
  // A tied embedding's lookup gradient sent as rows (zero/lookup_rows.h): the all-gathers' output
  // bytes (0: none), issued once every micro batch's backward reaches that block, i.e. when block
  // rows_ready_block (the one after it) finishes; its buckets are ready when the blocks tied to it
  // have added their parts, those it holds alone spread over the reports that follow as the reducer
  // packs them (bucket_ready_block, bucket_ready_share). Its own backward takes no time (the
  // exchange replaces it).
  double rows_gather_bytes = 0.0;
  std::size_t rows_ready_block = 0;
  // Stage 3: bytes of parameters gathered ahead of the block in use (stage3_prefetch_bucket_size;
  // at least the next block when not 0); infinity: every gather of a pass issued when it begins.
  double prefetch_bytes = std::numeric_limits<double>::infinity();
  // Bucket buffers the reductions take in turn (0: one per bucket): a bucket waits for the
  // reduction that used its buffer before it.
  std::size_t bucket_buffers = 0;
  // Stage 3's secondary partition (zero_hpz_partition_size; 1: none): the ranks of a group that
  // gathers within itself, on a comm stream of its own.
  int hpz_group_size = 1;
  // Activation checkpointing: the forward seconds each block runs again before its backward (0
  // for a block that keeps its activations); empty means none.
  std::vector<double> block_recompute_s;
  LinkModel link;
};

struct StepTimePrediction {
  double compute_s = 0.0;  // T_compute
  double comm_s = 0.0;     // T_comm
  double exposed_s = 0.0;  // with overlap
  double step_s = 0.0;     // T_compute + exposed
  double step_without_overlap_s = 0.0;  // overlap_comm false: step_off above
};

// Throws std::invalid_argument on a stage outside 0-3, world_size or micro_batches < 1, a
// negative time, share or latency, a bandwidth <= 0 with world_size > 1, no blocks, a bucket
// without its ready block (or one naming a block that does not exist), or (stages 1-3) not one
// gather size per block.
StepTimePrediction predict_step_time(const StepTimeInputs& inputs);

// The inputs for options.stage and a micro batch of B sequences of T tokens on a device of `rates`:
// each block's time from models::block_time (the model the emulated device waits out), T_micro
// their sum and the shares theirs (equal shares when no block takes any time); buckets from the
// partition plan the engine uses (stage 0: one rank's plan, all-reduced whole) in
// options.comm_dtype, gathers of the blocks' padded parameters in options.compute_dtype.
StepTimeInputs step_time_inputs(const models::Model& model, const ZeroOptions& options, int world_size, int B, int T,
                                Device device, const models::DeviceRates& rates, const LinkModel& link);

}  // namespace zt
