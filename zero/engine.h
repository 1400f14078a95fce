// The ZeRO training engine: one optimizer step of a model over data-parallel ranks.
//
// A step runs gradient_accumulation_steps micro-batches of forward and backward, then the
// optimizer. Storage per rank, by stage (N ranks; shards and padding from partition.h):
//
//   stage  parameters (compute dtype)   gradients                        optimizer (fp32)
//   0      every block                  every block + fp32 full grads    master, m, v of all
//   1      every block                  every block + fp32 shard         master, m, v of shard
//   2      every block                  fp32 shard                       master, m, v of shard
//   3      shard (+ gathered blocks)    fp32 shard                       master, m, v of shard
//
// Stages 0/1 accumulate block gradients locally over micro-batches and reduce them once, during
// the last micro-batch's backward (like no_sync). Stages 2/3 keep no full gradient: every
// micro-batch's backward reduces its buckets into the fp32 shard, which accumulates (DeepSpeed
// does the same; keeping full gradients across micro-batches would defeat the partitioning).
//
// The optimizer updates the shard block by block in forward order, and each block's new parameters
// go out as soon as its update is enqueued: stages 1/2 all-gather the block on the comm stream,
// stage 3 prefetches the blocks the next forward's first step needs. So the next forward's first
// gathers run while the optimizer still updates the later blocks, and the next forward waits for a
// block's gather only when it reaches that block. Where the engine knows the next batch's tokens
// and the tied embedding's gradient goes as rows, the table goes out first as only the rows the
// lookup reads, and whole during the forward (zero/first_rows.h), where the ranks' measured
// update and table gather times say that pays (zero/rows_first_choice.h).
//
// The parts: GradientReducer (buckets and their reductions during backward), ParamGatherer
// (stage 3 gathers and prefetch), StepStatistics (the one all-reduce before the update),
// ShardOptimizer (master weights, moments, AdamW), PartitionPlan (who owns what). The engine
// holds the parameters and gradients and runs the schedule. Nothing in a step allocates from the
// system after the first step, and the host reads the device once per step (StepStats::allocations
// counts the former).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/two_level_all_gather.h"
#include "core/cpu_contention.h"
#include "models/activations.h"
#include "models/model.h"
#include "optim/loss_scaler.h"
#include "zero/engine_options.h"
#include "zero/exposed_time.h"
#include "zero/first_rows.h"
#include "zero/gradient_reducer.h"
#include "zero/lookup_rows.h"
#include "zero/param_gatherer.h"
#include "zero/partition.h"
#include "zero/rows_first_choice.h"
#include "zero/shard_optimizer.h"
#include "zero/step_statistics.h"
#include "zero/timeline.h"

namespace zt {

struct StepStats {
  double loss = 0.0;           // mean over micro-batches and ranks
  double grad_norm = 0.0;      // global L2 norm of the (unscaled, unclipped) gradient
  double loss_scale = 1.0;
  bool skipped = false;        // overflow (inf/NaN gradients): no update on any rank
  double step_ms = 0.0;        // wall time of the whole step on this rank
  double comm_ms = 0.0;        // summed duration of this step's collectives on the comm stream
  double exposed_comm_ms = 0.0;  // time the compute stream waited for communication
  double comm_cpu_ms = 0.0;     // CPU time of the comm threads during the step (Communicator::cpu_time_ms; with
                                // zero_hpz_partition_size, the group's thread too)
  // Time the compute (calling) thread and the comm thread were ready to run but waited for a CPU
  // that other work held, during the step: their run-queue waits less what they may have waited
  // for each other (wait_for_other_work_ms); nullopt where the kernel does not publish the waits.
  std::optional<double> cpu_wait_ms;
  std::int64_t allocations = 0;  // memory taken from the system during the step: 0 after the first
  int stop_signal = 0;         // the stop signal some rank received (SIGTERM over SIGINT over SIGUSR1), or 0
};

class ZeroEngine {
 public:
  // Loads micro-batch `micro` (0-based, within the step) into the activations.
  using LoadMicroBatch = std::function<void(models::Activations&, int micro)>;
  // This rank's tokens of the micro batch the next step loads first (empty where they are not
  // known), without taking it from the source: the next load must hand out exactly these (a load
  // that does not is refused with std::logic_error on the rank it happens on). At stages 1-3
  // with the tied embedding's gradient as rows, the update then gathers only the embedding rows
  // the next forward's lookup reads, and the rest of the table during that forward
  // (zero/first_rows.h).
  using PeekNextTokens = std::function<std::span<const std::int32_t>()>;

  // micro_batch, seq_len: the (B, T) of every micro-batch.
  ZeroEngine(const models::Model& model, models::ComputeContext& ctx, Communicator& comm, const ZeroOptions& options,
             int micro_batch, int seq_len, MemoryTracker& tracker = MemoryTracker::process());
  ~ZeroEngine();

  // GPT-2 initialisation from seed, identical on every rank; each rank keeps what it owns.
  void init_parameters(std::uint64_t seed);
  // local_stop_signal: a stop signal this rank received (SIGTERM/SIGINT/SIGUSR1), or 0. It rides on the
  // step's one statistics all-reduce, so every rank learns of any rank's signal at the same step
  // without a collective of its own (StepStats::stop_signal).
  StepStats train_step(const LoadMicroBatch& load, double lr, int local_stop_signal = 0,
                       const PeekNextTokens& next_tokens = {});
  // Mean loss of one forward pass (no gradients), averaged over ranks.
  double eval_loss(const LoadMicroBatch& load);

  // Collective: every parameter as fp32, block after block, from the ranks' master shards.
  std::vector<float> gather_full_params_f32();
  const PartitionPlan& plan() const { return plan_; }
  std::int64_t optimizer_steps() const { return optimizer_steps_; }
  const LossScaler& loss_scaler() const { return loss_scaler_; }
  // Steps and evaluations from now on report their spans (each block's forward/backward, every
  // collective, the waits) to timeline; null stops recording (zero/timeline.h).
  void set_timeline(trace::Timeline* timeline);

  // Checkpoints. The shard of the plan's rank this process stands for (stage 0: the whole model,
  // the same on every rank), as host fp32 copies of the whole shard, padding included (zeros).
  std::vector<OwnedRange> owned_ranges() const { return optimizer_.owned_ranges(); }
  const ZeroOptions& options() const { return options_; }
  int shard_rank() const { return optimizer_.owner(); }
  using OptimizerShard = ShardOptimizer::HostState;
  OptimizerShard download_optimizer_shard();
  void download_optimizer_shard(OptimizerShard& into);  // reusing into's memory
  // Replaces the optimizer state with `source`'s values for owned_ranges(), refreshes the
  // compute-dtype parameters from the new master weights (stages 1/2 all-gather them as after a
  // step) and restores the step count and loss scaler: the next train_step continues as if the
  // saved run had gone on. Collective for stages 1-3 (every rank must call it).
  void load_state(ShardSource& source, std::int64_t optimizer_steps, const LossScaler::State& loss_scaler);

 private:
  // The parameters a pass over `block` reads: its own (unless `own` is false: a backward that never
  // reads them) and those of the block it is tied to; at stage 3 the views are `gathered`, in the
  // order of the gatherer's step.
  models::BlockParams block_params(std::size_t block, const std::vector<BufferView>& gathered, bool own = true) const;
  // The blocks whose parameters the forward (or the backward) of block b reads.
  std::vector<std::size_t> blocks_read(std::size_t b, bool backward) const;
  // first_step_reads_rows: the first step reads the rows gathered for these tokens (first_rows.h).
  void forward_backward(models::Activations& acts, bool boundary, bool first_step_reads_rows);
  void forward_pass(models::Activations& acts, bool backward_follows, bool first_step_reads_rows = false);
  // Stages 1-3 with a rows block: gathers every rank's tokens of the next step's first micro batch
  // (-1s from a rank that does not know its own, so that every rank decides alike), each followed
  // by the rank's vote on the update's table (rows_first_choice.h).
  void gather_next_tokens(const PeekNextTokens& peek);
  // The rows the next forward's lookup reads, where every rank's next tokens are known, the rows
  // are few enough (kFirstRowsMaxShareDivisor) and the votes do not choose the whole table;
  // nullopt otherwise. Waits for the tokens.
  std::optional<RowsRead> next_forward_rows();
  // The parameters or the batches' position change outside a step: what was gathered for the
  // next tokens no longer applies (the gatherer drops the rows themselves when invalidated).
  void forget_next_tokens();
  // Stage 3: which blocks the update gathers as soon as it has updated them (the next forward's
  // first step's; where that step reads rows, the following steps' within the prefetch budget,
  // updated before the table), and the order it updates the blocks in (empty: block order).
  std::vector<std::size_t> plan_update_gathers();
  void accumulate_micro_batch_grads();
  // Block b's fp32 accumulator: its own buffer (stage 1), or its range of the gradient shard (stage 0).
  BufferView grad_accumulator(std::size_t block);
  // The calling thread's and the comm threads' run-queue waits and CPU times so far (nullopt where
  // the kernel does not publish the waits), for StepStats::cpu_wait_ms; comm sums the world's and
  // the secondary partition group's threads.
  struct CpuClocks {
    ThreadClocks compute, comm;
  };
  std::optional<CpuClocks> cpu_clocks() const;
  double comm_cpu_time_ms() const;
  void optimizer_step(double lr, int local_stop_signal, StepStats& stats);
  // Block b's chunk of the gradient shard is final this step: its part of the gradient norm.
  void measure_gradient(std::size_t block);
  // Compute-dtype parameters of this rank's chunks from fp32 master values of the shard.
  void set_params_from_master(const std::vector<float>& master);
  // The optimizer has updated elements [begin, begin + count) of block b's chunk: sends the new
  // parameters where the next forward reads them (stages 1/2: the all-gather of that part of every
  // rank's chunk; stage 3: that part's gather into the block's gathered copy, if the next forward's
  // first step reads the block; stage 0: nothing).
  void publish_parameters(std::size_t block, std::size_t begin, std::size_t count);
  // The rows block's chunk is updated and the next lookup's rows are known: packs this rank's part
  // of them and gathers every rank's (first_rows.h); stage 3 hands them to the gatherer.
  void publish_rows(std::size_t block);
  // Stages 1/2: the rows in the table for the lookup (the forward's first step), and the table's
  // own all-gather once the lookup is done with them, or before a pass that reads it whole.
  void place_table_rows();
  void publish_table_after_rows();
  void sync_parameters();  // publish_parameters of every block, stale stage-3 gathers dropped first
  BufferView block_grad(std::size_t block);
  BufferView complete_grad(std::size_t block);
  double collective_ms(std::vector<Work>& works);
  // The reducer of plan_'s buckets, with the bucket buffers the options allow.
  std::unique_ptr<GradientReducer> make_reducer();
  // The communicator's workspaces sized for this plan's largest bucket and gather, at start-up.
  void reserve_comm_workspace();
  // reduce_bucket_size: auto — measures, picks the size and re-cuts the buckets (bucket_autotune.h).
  void choose_bucket_size_now();

  const models::Model& model_;
  models::ComputeContext& ctx_;
  Communicator& comm_;
  ZeroOptions options_;
  MemoryTracker& tracker_;
  PartitionPlan plan_;
  std::vector<std::optional<std::size_t>> tied_to_;

  std::vector<Buffer> params_;         // stages 0-2: every block's padded flat parameter
  Buffer param_shard_;                 // stage 3: this rank's shard in the compute dtype
  std::vector<Buffer> block_grads_;    // stages 0/1: every block's gradient; 2/3: while in flight
  bool grads_in_shard_ = false;        // block gradients are ranges of grad_shard_ (GradientReduction::in_place)
  // Stage 1 with gradient accumulation in bf16/f16: the micro-batches' gradients summed in fp32
  // (block_grads_ hold one micro-batch's). Stage 0 sums them in grad_shard_ (accumulates_in_shard).
  std::vector<Buffer> grad_accumulators_;
  Buffer grad_shard_;                  // f32 reduced gradients of this rank's shard
  ShardOptimizer optimizer_;
  ExposedTime exposed_;
  StepStatistics statistics_;
  // Every all-gather over all ranks (parameters, lookup rows), in two levels across hosts where the
  // placement allows (comm.two_level_all_gather); declared before what issues through it.
  std::unique_ptr<TwoLevelAllGather> all_gather_;
  std::vector<Work> param_sync_;       // stages 1/2: each block's pending all-gather
  std::unique_ptr<GradientReducer> reducer_;
  // The tied embedding whose lookup gradient goes out as rows (zero/lookup_rows.h), if any.
  std::optional<std::size_t> rows_block_;
  std::unique_ptr<LookupRowsExchange> rows_exchange_;
  // Stages 1-3 with a rows block: the next step's first tokens, this rank's and every rank's, their
  // gather, the rows the update gathers first (until it does), and whether the next training
  // forward's first step reads them (zero/first_rows.h).
  Buffer next_tokens_, all_next_tokens_;
  Work next_tokens_work_;
  bool next_tokens_gathered_ = false;
  std::optional<RowsRead> first_rows_;
  bool rows_gathered_ = false;
  std::size_t rows_parts_numel_ = 0;  // the rows' gather, all ranks' parts
  // Stages 1/2: the rows' gather, until the table's own all-gather follows it (publish_table_after_rows).
  std::optional<RowsGather> table_rows_;
  // With a rows block: the measurements and votes of lookup_rows_first: auto.
  std::optional<RowsFirstChoice> rows_first_choice_;
  std::vector<std::size_t> gathered_while_updating_;  // plan_update_gathers
  bool choose_bucket_size_after_step_ = false;  // reduce_bucket_size: auto, before the first step's end
  Event backward_begin_, backward_end_;         // the last micro-batch's backward, while choosing
  std::unique_ptr<Communicator> hpz_group_;  // stage 3's secondary partition group (zero_hpz_partition_size)
  std::unique_ptr<ParamGatherer> gatherer_;
  std::unique_ptr<models::Activations> acts_;
  LossScaler loss_scaler_;
  std::int64_t optimizer_steps_ = 0;
  std::vector<Work> other_works_;
  trace::Timeline* timeline_ = nullptr;
};

}  // namespace zt
