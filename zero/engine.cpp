#include "zero/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "core/cpu_contention.h"
#include "core/device_ops.h"
#include "core/log.h"
#include "core/memory_pool.h"
#include "models/device_time.h"
#include "models/init.h"
#include "models/model_state.h"
#include "models/ops/softmax_xent.h"
#include "optim/grad_stats.h"
#include "zero/bucket_autotune.h"
#include "zero/memory_plan.h"

namespace zt {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool reads(const std::vector<std::size_t>& blocks, std::size_t block) {
  return std::find(blocks.begin(), blocks.end(), block) != blocks.end();
}

// Where traced work on a stream starts; records nothing when no timeline is recording.
Event trace_mark(const trace::Timeline* timeline, Stream& stream) { return timeline ? stream.record() : Event{}; }

// The part of an update in block order done before the table's gather can begin: the blocks before
// it and its first piece, over the shard's elements (AdamW's time goes by elements).
double share_before_table(const PartitionPlan& plan, std::size_t table) {
  const std::vector<std::size_t> pieces = publish_pieces(plan);
  std::size_t before = 0, all = 0;
  for (std::size_t b = 0; b < plan.blocks().size(); ++b) {
    all += plan.block(b).chunk_numel;
    if (b < table) before += plan.block(b).chunk_numel;
  }
  const std::vector<ChunkPiece> table_pieces =
      chunk_pieces(plan.block(table).chunk_numel, pieces.empty() ? 1 : pieces[table], plan.chunk_alignment());
  if (!table_pieces.empty()) before += table_pieces.front().count;
  return all == 0 ? 0.0 : static_cast<double>(before) / static_cast<double>(all);
}

}  // namespace

ZeroEngine::ZeroEngine(const models::Model& model, models::ComputeContext& ctx, Communicator& comm,
                       const ZeroOptions& options, int micro_batch, int seq_len, MemoryTracker& tracker)
    : model_(model),
      ctx_(ctx),
      comm_(comm),
      options_(options),
      tracker_(tracker),
      plan_(make_partition_plan(model, options, comm.world_size())),
      optimizer_(model, plan_, options.stage == 0 ? 0 : comm.rank(), options, ctx.device(), tracker),
      statistics_(ctx.device(), ctx.stream(), model.num_blocks(), tracker),
      loss_scaler_(options.loss_scaler) {
  if (options.stage < 0 || options.stage > 3) throw std::invalid_argument("ZeRO stage must be 0, 1, 2 or 3");
  if (options.gradient_accumulation_steps < 1) throw std::invalid_argument("gradient accumulation steps must be >= 1");
  if (ctx.dtype() != options.compute_dtype)
    throw std::invalid_argument("the compute context's dtype differs from the engine's compute dtype");
  const Device device = ctx.device();
  const DType dtype = options.compute_dtype;
  const std::size_t blocks = model.num_blocks();
  for (std::size_t b = 0; b < blocks; ++b) {
    tied_to_.push_back(model.block(b).tied_block());
    if (tied_to_[b] && *tied_to_[b] >= b)
      throw std::invalid_argument("a block may only be tied to an earlier block (its gradient completes later)");
  }
  if (options.stage < 3) {
    for (std::size_t b = 0; b < blocks; ++b)
      params_.emplace_back(device, dtype, plan_.block(b).padded_numel, MemCategory::params, tracker);
  } else {
    param_shard_ = Buffer(device, dtype, plan_.shard_numel(), MemCategory::params, tracker);
  }
  block_grads_.resize(blocks);
  grads_in_shard_ = plan_.reduction() == GradientReduction::in_place;
  if (options.stage < 2 && !grads_in_shard_) {
    for (std::size_t b = 0; b < blocks; ++b)
      block_grads_[b] = Buffer(device, dtype, plan_.block(b).numel, MemCategory::grads, tracker);
    if (accumulates_in_fp32(options) && !accumulates_in_shard(options))
      for (std::size_t b = 0; b < blocks; ++b)
        grad_accumulators_.emplace_back(device, DType::f32, plan_.block(b).numel, MemCategory::grads, tracker);
  }
  grad_shard_ = Buffer(device, DType::f32, plan_.shard_numel(), MemCategory::grads, tracker);
  param_sync_.resize(blocks);
  choose_bucket_size_after_step_ = options.reduce_bucket_size == kAutoBucketSize && comm.world_size() > 1;
  rows_block_ = rows_exchanged_block(model, options, comm.world_size(), micro_batch, seq_len, device);
  all_gather_ = std::make_unique<TwoLevelAllGather>(
      comm, comm.options().two_level_all_gather && (options.stage > 0 || rows_block_) ? comm.ranks_per_host_block()
                                                                                        : 0);
  if (all_gather_->two_level() && comm.rank() == 0)
    log::info("all-gathers in two levels: across {} hosts, then within each host's {} ranks "
              "(comm.two_level_all_gather)",
              all_gather_->hosts(), all_gather_->ranks_per_host());
  if (rows_block_) {
    rows_exchange_ = std::make_unique<LookupRowsExchange>(model, *rows_block_, plan_, micro_batch, seq_len,
                                                          *all_gather_, ctx.stream(), device, dtype, exposed_, tracker);
    rows_first_choice_.emplace();
  }
  reducer_ = make_reducer();
  if (options.stage == 3 && options.zero_hpz_partition_size > 1) {
    const int size = options.zero_hpz_partition_size;
    if (comm.world_size() % size != 0)
      throw std::invalid_argument(fmt::format("zero_optimization.zero_hpz_partition_size {} does not divide the {} "
                                              "ranks", size, comm.world_size()));
    // Named per group: each communicator's ranks publish flight records under its name.
    hpz_group_ = comm.split(comm.rank() / size, comm.rank(), fmt::format("hpz-{}", comm.rank() / size));
    if (hpz_group_->rank() == 0 && hpz_group_->local_size() < size)
      log::warn("zero_optimization.zero_hpz_partition_size {}: ranks {}-{} are not all on one host, so their "
                "gathers within the group still cross hosts; place ranks host by host with that many per host",
                size, comm.rank(), comm.rank() + size - 1);
  }
  reserve_comm_workspace();
  if (options.stage == 3) {
    gatherer_ = std::make_unique<ParamGatherer>(plan_, *all_gather_, hpz_group_.get(), ctx.stream(), device, dtype,
                                                options.stage3_prefetch_bucket_size,
                                                options.stage3_param_persistence_threshold, exposed_, tracker);
    gatherer_->set_shard(param_shard_.view());
    if (rows_first_choice_) gatherer_->time_gathers(*rows_block_, &rows_first_choice_->table_gather());
  }
  acts_ = std::make_unique<models::Activations>(model, micro_batch, seq_len, device, dtype, tracker,
                                                options.recompute_every);
  acts_->set_stream(ctx.stream());
}

ZeroEngine::~ZeroEngine() {
  // Collectives still in flight write into buffers about to be freed: let them finish.
  for (const Work& work : param_sync_) wait_before_freeing(work);
  wait_before_freeing(next_tokens_work_);  // not waited for after a skipped step or an error
  if (table_rows_) wait_before_freeing(table_rows_->work);
}

void ZeroEngine::init_parameters(std::uint64_t seed) {
  if (gatherer_) gatherer_->invalidate();  // a prefetch may still read the shard
  forget_next_tokens();
  const std::size_t owner = static_cast<std::size_t>(optimizer_.owner());
  std::vector<float> master(plan_.shard_numel(), 0.0f);
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    const BlockPlacement& placement = plan_.block(b);
    std::vector<float> values(placement.padded_numel, 0.0f);
    models::init_block_params(model_.block(b).layout(), seed, b, values.data());
    std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(owner * placement.chunk_numel), placement.chunk_numel,
                master.begin() + static_cast<std::ptrdiff_t>(placement.shard_offset));
    if (options_.stage < 3) upload_f32(params_[b].view(), values.data(), ctx_.stream(), tracker_);
  }
  optimizer_.reset(master, ctx_.stream());
  if (options_.stage == 3) upload_f32(param_shard_.view(), master.data(), ctx_.stream(), tracker_);
  optimizer_steps_ = 0;
}

void ZeroEngine::set_timeline(trace::Timeline* timeline) {
  timeline_ = timeline;
  reducer_->set_timeline(timeline);
  if (gatherer_) gatherer_->set_timeline(timeline);
  if (rows_exchange_) rows_exchange_->set_timeline(timeline);
}

models::BlockParams ZeroEngine::block_params(std::size_t block, const std::vector<BufferView>& gathered,
                                             bool own) const {
  std::size_t next_gathered = 0;
  auto view_of = [&](std::size_t b) {
    std::size_t numel = plan_.block(b).numel;
    return options_.stage == 3 ? gathered.at(next_gathered++).slice(0, numel) : params_[b].slice(0, numel);
  };
  models::BlockParams p;
  if (own) p.params = view_of(block);
  if (tied_to_[block]) p.tied_params = view_of(*tied_to_[block]);
  return p;
}

std::vector<std::size_t> ZeroEngine::blocks_read(std::size_t b, bool backward) const {
  // GPT-2's and Llama's embedding backward scatters the output gradient and never reads the
  // table: at stage 3 it needs no gather, which for a tied embedding (a third of GPT-2 124M) saves
  // a whole extra all-gather per micro-batch.
  std::vector<std::size_t> blocks;
  if (!backward || model_.block(b).backward_reads_params()) blocks.push_back(b);
  if (tied_to_[b]) blocks.push_back(*tied_to_[b]);
  return blocks;
}

BufferView ZeroEngine::block_grad(std::size_t block) {
  if (grads_in_shard_) return grad_shard_.slice(plan_.block(block).shard_offset, plan_.block(block).numel);
  Buffer& grad = block_grads_.at(block);
  if (grad.empty() && plan_.block(block).numel > 0) {
    // Stages 2/3: a gradient lives from the block's (or its tied user's) backward until it is
    // copied into its bucket; it is working memory from the pool, not a model state.
    grad = Buffer(ctx_.device(), options_.compute_dtype, plan_.block(block).numel, MemCategory::workspace,
                  ctx_.stream(), tracker_);
  }
  return grad.view();
}

BufferView ZeroEngine::grad_accumulator(std::size_t block) {
  if (accumulates_in_shard(options_)) return grad_shard_.slice(plan_.block(block).shard_offset, plan_.block(block).numel);
  return grad_accumulators_.at(block).view();
}

BufferView ZeroEngine::complete_grad(std::size_t block) {
  if (!accumulates_in_fp32(options_)) return block_grad(block);
  // The last micro-batch's gradient joins the earlier ones' in fp32.
  accumulate(grad_accumulator(block), block_grads_[block].view(), ctx_.stream());
  return grad_accumulator(block);
}

void ZeroEngine::accumulate_micro_batch_grads() {
  if (!accumulates_in_fp32(options_)) return;
  for (std::size_t b = 0; b < block_grads_.size(); ++b) {
    accumulate(grad_accumulator(b), block_grads_[b].view(), ctx_.stream());
    fill_zero(block_grads_[b].view(), ctx_.stream());
  }
}

void ZeroEngine::forward_pass(models::Activations& acts, bool backward_follows, bool first_step_reads_rows) {
  const std::size_t n = model_.num_blocks();
  if (gatherer_) {
    std::vector<std::vector<std::size_t>> steps;
    for (std::size_t b = 0; b < n; ++b) steps.push_back(blocks_read(b, false));
    if (backward_follows)
      for (std::size_t b = n; b-- > 0;) steps.push_back(blocks_read(b, true));
    // A tied block stays gathered through the forward.
    gatherer_->begin_pass(std::move(steps), n, first_step_reads_rows);
  }
  for (std::size_t b = 0; b < n; ++b) {
    const bool reads_rows = b == 0 && first_step_reads_rows;
    std::vector<BufferView> gathered;
    if (gatherer_) {
      gathered = gatherer_->enter(b);
    } else {
      for (std::size_t needed : {b, tied_to_[b].value_or(b)}) {
        if (table_rows_ && needed == rows_block_) {
          if (reads_rows) {
            place_table_rows();
            continue;
          }
          publish_table_after_rows();  // a pass that reads the whole table first (an evaluation)
        }
        exposed_.wait(param_sync_[needed], ctx_.stream(), timeline_, [&] {
          return std::pair{fmt::format("wait params {}", model_.block(needed).name()),
                           nlohmann::json{{"block", needed}}};
        });
      }
    }
    const models::DeviceRates* rates = ctx_.emulation();
    if (rates && reads_rows)  // placing the gathered rows (first_rows.h)
      models::occupy_device(models::copy_seconds(rows_parts_numel_ * dtype_size(options_.compute_dtype), *rates));
    Event begin = trace_mark(timeline_, ctx_.stream());
    models::forward_block(ctx_, model_, b, block_params(b, gathered), acts);
    if (timeline_)
      timeline_->add_stream_span(trace::Lane::compute, fmt::format("forward {}", model_.block(b).name()), begin,
                                 ctx_.stream().record(), {{"block", b}});
    if (gatherer_) gatherer_->leave(b);
    if (reads_rows && table_rows_) publish_table_after_rows();  // the lookup is done with the rows
  }
  if (gatherer_ && !backward_follows) gatherer_->end_pass();
}

void ZeroEngine::forward_backward(models::Activations& acts, bool boundary, bool first_step_reads_rows) {
  const std::size_t n = model_.num_blocks();
  const double scale = options_.loss_scaling ? loss_scaler_.scale() : 1.0;
  const float dloss_multiplier = static_cast<float>(scale / options_.gradient_accumulation_steps);
  // The loss block's forward writes the logits' gradient with the losses (the fused classifier);
  // evaluations that follow, even after an error, compute the losses alone.
  acts.set_loss_gradient_in_forward(dloss_multiplier);
  struct LossGradientInForward {
    models::Activations& acts;
    ~LossGradientInForward() { acts.set_loss_gradient_in_forward(std::nullopt); }
  } reset_after_step{acts};
  forward_pass(acts, true, first_step_reads_rows);
  models::ops::add_mean_loss(ctx_, statistics_.loss_accumulator(), acts.losses(), acts.valid_targets());
  const bool reduce_now = options_.stage >= 2 || boundary;
  if (reduce_now) {
    // The last micro batch's reductions are final: each block's chunk is measured for the gradient
    // norm as soon as it lands, while the rest of backward and its reductions go on. The rows block
    // is final only once its rows are added, after backward.
    std::function<void(std::size_t)> landed;
    if (boundary)
      landed = [this](std::size_t b) {
        if (b != rows_block_) measure_gradient(b);
      };
    reducer_->begin(grad_shard_.view(), [this](std::size_t b) { return complete_grad(b); }, std::move(landed));
  }
  if (choose_bucket_size_after_step_) backward_begin_ = ctx_.stream().record();
  for (std::size_t b = n; b-- > 0;) {
    const std::size_t step = n + (n - 1 - b);
    std::vector<BufferView> gathered;
    if (gatherer_) gathered = gatherer_->enter(step);
    if (reduce_now && b == rows_block_) {
      // Its lookup gradient goes out as rows; the blocks tied to it completed the rest, which is
      // being reduced already (zero/lookup_rows.h).
      rows_exchange_->launch(acts.input(), acts.d_output(b));
      if (gatherer_) gatherer_->leave(step);
      continue;
    }
    BufferView tied_grad = tied_to_[b] ? block_grad(*tied_to_[b]) : BufferView{};
    const models::BlockParams params = block_params(b, gathered, model_.block(b).backward_reads_params());
    if (acts.recomputes(b)) {
      // Activation checkpointing: the block's saved tensors again, from its kept input. A
      // recomputed block's backward reads its parameters, so these are the views backward
      // gathered anyway (Activations::recomputed_blocks).
      Event recompute_begin = trace_mark(timeline_, ctx_.stream());
      models::forward_block(ctx_, model_, b, params, acts);
      if (timeline_)
        timeline_->add_stream_span(trace::Lane::compute, fmt::format("recompute {}", model_.block(b).name()),
                                   recompute_begin, ctx_.stream().record(), {{"block", b}});
    }
    Event begin = trace_mark(timeline_, ctx_.stream());
    // Stages 2/3: a packed gradient's memory goes back to the pool, in the compute stream's order.
    auto release = [&](const std::vector<std::size_t>& packed) {
      if (options_.stage >= 2)
        for (std::size_t block : packed) block_grads_[block] = Buffer();
    };
    std::function<void()> tied_grads_done;
    if (reduce_now && tied_to_[b]) tied_grads_done = [&] { release(reducer_->tied_grads_ready(b)); };
    models::backward_block(ctx_, model_, b, params, block_grad(b), tied_grad, acts, dloss_multiplier,
                           tied_grads_done);
    if (timeline_)
      timeline_->add_stream_span(trace::Lane::compute, fmt::format("backward {}", model_.block(b).name()), begin,
                                 ctx_.stream().record(), {{"block", b}});
    if (gatherer_) gatherer_->leave(step);
    if (reduce_now) release(reducer_->block_ready(b));
  }
  if (choose_bucket_size_after_step_) backward_end_ = ctx_.stream().record();
  if (reduce_now) {
    for (std::size_t packed : reducer_->finish())
      if (options_.stage >= 2) block_grads_[packed] = Buffer();
    if (rows_exchange_) {
      // Averaged as the reductions average (or summed where the shard keeps the ranks' sum).
      const float scale = static_cast<float>(reducer_->sum_divisor()) / static_cast<float>(comm_.world_size());
      rows_exchange_->add_into(grad_shard_.view(), optimizer_.owner(), scale);
    }
  } else {
    accumulate_micro_batch_grads();
  }
  if (gatherer_) gatherer_->end_pass();
}

double ZeroEngine::comm_cpu_time_ms() const {
  return comm_.cpu_time_ms() + (hpz_group_ ? hpz_group_->cpu_time_ms() : 0.0) + all_gather_->cpu_time_ms();
}

std::optional<ZeroEngine::CpuClocks> ZeroEngine::cpu_clocks() const {
  const std::optional<double> compute_wait = thread_run_queue_wait_ms(), comm_wait = comm_.cpu_wait_ms();
  const std::optional<double> group_wait = hpz_group_ ? hpz_group_->cpu_wait_ms() : std::optional<double>(0.0);
  const std::optional<double> levels_wait = all_gather_->cpu_wait_ms();
  if (!compute_wait || !comm_wait || !group_wait || !levels_wait) return std::nullopt;
  return CpuClocks{{*compute_wait, thread_cpu_time_ms()},
                   {*comm_wait + *group_wait + *levels_wait, comm_cpu_time_ms()}};
}

StepStats ZeroEngine::train_step(const LoadMicroBatch& load, double lr, int local_stop_signal,
                                 const PeekNextTokens& next_tokens) {
  const std::optional<CpuClocks> clocks_before = cpu_clocks();  // /proc reads, outside the step's time
  const auto start = Clock::now();
  const std::int64_t allocations_before = system_allocation_count();
  const double comm_cpu_before = comm_cpu_time_ms();
  StepStats stats;
  statistics_.begin();
  for (int micro = 0; micro < options_.gradient_accumulation_steps; ++micro) {
    const auto load_start = Clock::now();
    load(*acts_, micro);
    const bool reads_rows = micro == 0 && std::exchange(rows_gathered_, false);
    if (reads_rows && !std::equal(acts_->input().as<std::int32_t>(), acts_->input().as<std::int32_t>() + acts_->input().numel,
                                  next_tokens_.data_as<std::int32_t>()))
      throw std::logic_error("the first micro batch's tokens differ from those the step before was told would come "
                             "(the batch source's peek is wrong)");
    const bool last = micro + 1 == options_.gradient_accumulation_steps;
    if (last) gather_next_tokens(next_tokens);
    if (timeline_)
      timeline_->add_host_span(trace::Lane::host, "load batch", load_start, Clock::now(), {{"micro_batch", micro}});
    forward_backward(*acts_, last, reads_rows);
  }
  Event optimizer_begin = trace_mark(timeline_, ctx_.stream());
  optimizer_step(lr, local_stop_signal, stats);
  if (timeline_)
    timeline_->add_stream_span(trace::Lane::compute, "optimizer step", optimizer_begin, ctx_.stream().record());
  stats.comm_ms = collective_ms(other_works_);
  stats.exposed_comm_ms = exposed_.take_ms();
  stats.comm_cpu_ms = comm_cpu_time_ms() - comm_cpu_before;
  if (choose_bucket_size_after_step_) choose_bucket_size_now();  // part of the first step's time
  stats.step_ms = ms_since(start);
  if (const std::optional<CpuClocks> clocks = cpu_clocks(); clocks && clocks_before) {
    auto advanced = [](ThreadClocks now, ThreadClocks before) {
      return ThreadClocks{now.wait_ms - before.wait_ms, now.cpu_ms - before.cpu_ms};
    };
    stats.cpu_wait_ms = wait_for_other_work_ms(advanced(clocks->compute, clocks_before->compute),
                                               advanced(clocks->comm, clocks_before->comm));
  }
  stats.allocations = system_allocation_count() - allocations_before;
  return stats;
}

void ZeroEngine::optimizer_step(double lr, int local_stop_signal, StepStats& stats) {
  Stream& stream = ctx_.stream();
  Work all_reduce;
  // Every other block was measured when its reductions landed (agree() refuses a step missing one).
  if (rows_exchange_) measure_gradient(*rows_block_);
  for (std::size_t b = 0; b < model_.num_blocks(); ++b)
    if (plan_.block(b).buckets.empty()) measure_gradient(b);  // no elements: nothing ever lands
  const AgreedStatistics agreed = statistics_.agree(options_.gradient_accumulation_steps, options_.stage == 0,
                                                    local_stop_signal, comm_, exposed_, timeline_, all_reduce);
  other_works_.push_back(all_reduce);
  stats.loss = agreed.loss;
  stats.stop_signal = agreed.stop_signal;
  const double scale = options_.loss_scaling ? loss_scaler_.scale() : 1.0;
  stats.loss_scale = scale;
  // The shard may hold the ranks' sum (reduced in place): its norm is divisor times the average's.
  const double divisor = reducer_->sum_divisor();
  stats.grad_norm = std::sqrt(agreed.sum_of_squares) / divisor / scale;
  stats.skipped = options_.loss_scaling ? loss_scaler_.update(agreed.non_finite) : agreed.non_finite;
  if (!stats.skipped) {
    ++optimizer_steps_;
    const float multiplier = clip_coefficient(stats.grad_norm, options_.gradient_clipping) / static_cast<float>(scale) /
                             static_cast<float>(divisor);
    if (gatherer_) gatherer_->invalidate();  // its gathered copies are about to go stale
    first_rows_ = next_forward_rows();
    const Event update_begin = rows_first_choice_ ? stream.record() : Event{};
    const std::vector<std::size_t> order = plan_update_gathers();
    const std::vector<std::size_t> pieces = options_.stage == 0 ? std::vector<std::size_t>{} : publish_pieces(plan_);
    auto publish = [this](std::size_t block, std::size_t begin, std::size_t count) {
      publish_parameters(block, begin, count);
    };
    if (const models::DeviceRates* rates = ctx_.emulation()) {  // the emulated device: its time, no arithmetic
      for (std::size_t i = 0; i < model_.num_blocks(); ++i)
        for (const std::size_t b = order.empty() ? i : order[i]; const ChunkPiece& piece :
             chunk_pieces(plan_.block(b).chunk_numel, pieces.empty() ? 1 : pieces[b], plan_.chunk_alignment())) {
          models::occupy_device(models::optimizer_step_seconds(piece.count, options_.compute_dtype, *rates));
          publish(b, piece.begin, piece.count);
        }
    } else {
      optimizer_.update(grad_shard_.view(), lr, multiplier, optimizer_steps_,
                        [&](std::size_t block, std::size_t block_offset, std::size_t shard_offset, std::size_t count) {
                          return options_.stage < 3 ? params_[block].slice(block_offset, count).data
                                                    : param_shard_.slice(shard_offset, count).data;
                        },
                        pieces, publish, stream, order);
    }
    if (rows_first_choice_) rows_first_choice_->update_ran(update_begin, stream.record());
  }
  next_tokens_gathered_ = false;  // a skipped step's update gathers nothing for them
  fill_zero(grad_shard_.view(), stream);
  if (options_.stage < 2)
    for (Buffer& grad : block_grads_) fill_zero(grad.view(), stream);
  for (Buffer& accumulator : grad_accumulators_) fill_zero(accumulator.view(), stream);
}

void ZeroEngine::measure_gradient(std::size_t block) {
  Event begin = trace_mark(timeline_, ctx_.stream());
  BufferView chunk = grad_shard_.slice(plan_.block(block).shard_offset, plan_.block(block).chunk_numel);
  if (const models::DeviceRates* rates = ctx_.emulation()) {  // the emulated device: the pass's time, no arithmetic
    models::occupy_device(models::gradient_statistics_seconds(chunk.numel, *rates));
    chunk = chunk.slice(0, 0);
  }
  statistics_.measure(block, chunk);
  if (timeline_)
    timeline_->add_stream_span(trace::Lane::compute, fmt::format("gradient norm {}", model_.block(block).name()), begin,
                               ctx_.stream().record(), {{"block", block}});
}

std::unique_ptr<GradientReducer> ZeroEngine::make_reducer() {
  return std::make_unique<GradientReducer>(plan_, tied_to_, comm_, ctx_.stream(), ctx_.device(), options_.comm_dtype,
                                           options_.overlap_comm,
                                           std::max<std::size_t>(2, bucket_buffer_count(plan_, options_)), exposed_,
                                           tracker_, rows_block_);
}

void ZeroEngine::reserve_comm_workspace() {
  std::size_t bucket = 0, block = 0;
  for (const BucketPlacement& b : plan_.buckets()) bucket = std::max(bucket, b.numel(plan_.shards()));
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) block = std::max(block, plan_.block(b).padded_numel);
  const bool all_reduce = plan_.reduction() != GradientReduction::reduce_scatter;
  comm_.reserve_workspace(all_reduce ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter,
                          options_.comm_dtype, bucket);
  if (options_.stage > 0) all_gather_->reserve_workspace(options_.compute_dtype, block);
  if (hpz_group_) hpz_group_->reserve_workspace(CollectiveKind::all_gather, options_.compute_dtype, block);
}

void ZeroEngine::choose_bucket_size_now() {
  choose_bucket_size_after_step_ = false;
  const std::size_t largest = std::min(initial_bucket_size(options_), plan_.padded_total_numel());
  const bool all_reduce = plan_.reduction() != GradientReduction::reduce_scatter;
  const BucketTimings timings =
      measure_bucket_timings(comm_, options_.comm_dtype, all_reduce, largest,
                             backward_end_.elapsed_ms_since(backward_begin_), ctx_.stream(), tracker_);
  const BucketSizeChoice choice = choose_bucket_size(timings, plan_.padded_total_numel(),
                                                     dtype_size(options_.comm_dtype), kSmallestAutoBucketSize,
                                                     initial_bucket_size(options_));
  // Only the buckets change: the shard layout (optimizer state, parameters) does not depend on them.
  ZeroOptions chosen = options_;
  chosen.reduce_bucket_size = choice.bucket_numel;
  reducer_.reset();  // its buffers go first: the old and new ones together would exceed the plan
  plan_ = make_partition_plan(model_, chosen, comm_.world_size());
  reducer_ = make_reducer();
  reserve_comm_workspace();
  reducer_->set_timeline(timeline_);
  if (comm_.rank() == 0)
    log::info("zero_optimization.reduce_bucket_size auto: {} elements in {} buckets: {}", choice.bucket_numel,
              plan_.buckets().size(), choice.reason);
}

void ZeroEngine::publish_parameters(std::size_t b, std::size_t begin, std::size_t count) {
  if (options_.stage == 0) return;  // every rank updated every parameter
  const BlockPlacement& placement = plan_.block(b);
  if (first_rows_ && b == rows_block_) {
    // Only the rows the next lookup reads, once the whole chunk is updated (first_rows.h).
    if (begin + count == placement.chunk_numel) publish_rows(b);
    return;
  }
  if (options_.stage == 3) {
    if (reads(gathered_while_updating_, b)) gatherer_->prefetch(b, begin, count);
    return;
  }
  // Elements [begin, begin + count) of every rank's chunk, each rank's own part in place.
  const std::vector<BufferView> chunks =
      chunk_parts(params_[b].view(), placement.chunk_numel, comm_.world_size(), begin, count);
  // The block's pieces complete in issue order: waiting for the last is enough.
  const TwoLevelAllGather::Issued issued =
      all_gather_->all_gather(chunks[static_cast<std::size_t>(comm_.rank())], chunks, ctx_.stream());
  param_sync_[b] = issued.done;
  if (rows_first_choice_ && b == rows_block_)
    rows_first_choice_->table_gather().add(issued, begin, count, placement.chunk_numel);
  const bool whole = count == placement.chunk_numel;
  trace::record_parts(issued,
                      fmt::format("all_gather params {}{}", model_.block(b).name(),
                                  whole ? "" : fmt::format(" [{}, {})", begin, begin + count)),
                      {{"block", b}}, other_works_, timeline_);
}

void ZeroEngine::publish_rows(std::size_t b) {
  const BlockPlacement& placement = plan_.block(b);
  const std::size_t rank = static_cast<std::size_t>(comm_.rank());
  const void* own_chunk = options_.stage == 3
                              ? param_shard_.slice(placement.shard_offset, placement.chunk_numel).data
                              : params_[b].slice(rank * placement.chunk_numel, placement.chunk_numel).data;
  RowsGather rows(*std::exchange(first_rows_, std::nullopt), placement.chunk_numel, comm_.rank(), comm_.world_size(),
                  own_chunk, ctx_.device(), options_.compute_dtype, ctx_.stream(), tracker_);
  if (const models::DeviceRates* rates = ctx_.emulation())  // the packing's time
    models::occupy_device(models::copy_seconds(rows.stride * dtype_size(options_.compute_dtype), *rates));
  rows_parts_numel_ = rows.parts_numel();
  rows_gathered_ = true;
  if (options_.stage == 3) {
    // The whole table follows in a piece per forward step before the first that reads it all. A
    // quarter of them go now, behind the rows: the link is free while the other blocks are
    // updated, and fewer are left to share it with the forward's own gathers.
    std::size_t whole_step = 1;
    while (whole_step < model_.num_blocks() && !reads(blocks_read(whole_step, false), b)) ++whole_step;
    gatherer_->prefetch_rows(b, std::move(rows), whole_step);
    gatherer_->launch_pieces(b, (whole_step + 3) / 4);
    return;
  }
  // Stages 1/2: the table's own all-gather waits until the lookup has read the rows (forward_pass),
  // behind the other blocks' all-gathers that the update issues now.
  const TwoLevelAllGather::Issued issued = all_gather_->all_gather(rows.packed.view(), rows.parts.view(), ctx_.stream());
  rows.work = issued.done;
  trace::record_parts(issued, fmt::format("all_gather params {} rows", model_.block(b).name()), {{"block", b}},
                      other_works_, timeline_);
  table_rows_ = std::move(rows);
}

void ZeroEngine::place_table_rows() {
  if (table_rows_->placed) return;
  const std::size_t b = *rows_block_;
  exposed_.wait(table_rows_->work, ctx_.stream(), timeline_, [&] {
    return std::pair{fmt::format("wait params {} rows", model_.block(b).name()), nlohmann::json{{"block", b}}};
  });
  table_rows_->place(params_[b].data());
}

void ZeroEngine::publish_table_after_rows() {
  // The rows' buffers go back to the pool in the compute stream's order, after their gather.
  if (!table_rows_->placed) table_rows_->work.wait(ctx_.stream());
  table_rows_.reset();
  publish_parameters(*rows_block_, 0, plan_.block(*rows_block_).chunk_numel);
}

std::vector<std::size_t> ZeroEngine::plan_update_gathers() {
  gathered_while_updating_.clear();
  if (!first_rows_) {
    if (options_.stage == 3) gathered_while_updating_ = blocks_read(0, false);
    return {};
  }
  // The blocks of the forward's next steps, as many as the prefetch budget takes (at least one),
  // then the table: their gathers keep the link busy while the table is updated (at stages 1/2
  // every block is all-gathered as it is updated; this only orders them).
  const std::size_t budget = options_.stage3_prefetch_bucket_size;
  std::vector<std::size_t> first;
  std::size_t ahead = 0;
  for (std::size_t step = 1; step < model_.num_blocks() && budget > 0; ++step) {
    bool full = false;
    for (std::size_t block : blocks_read(step, false)) {
      const std::size_t numel = plan_.block(block).padded_numel;
      if (block == rows_block_ || reads(first, block)) continue;
      if (ahead > 0 && ahead + numel > budget) {
        full = true;
        break;
      }
      first.push_back(block);
      ahead += numel;
    }
    if (full) break;
  }
  if (options_.stage == 3) gathered_while_updating_ = first;
  std::vector<std::size_t> order = first;
  order.push_back(*rows_block_);
  for (std::size_t block = 0; block < model_.num_blocks(); ++block)
    if (!reads(order, block)) order.push_back(block);
  return order;
}

void ZeroEngine::gather_next_tokens(const PeekNextTokens& peek) {
  if (!peek || options_.lookup_rows_first == LookupRowsFirst::never || options_.stage == 0 || !rows_block_ ||
      !reads(blocks_read(0, false), *rows_block_))
    return;
  const std::size_t positions = acts_->input().numel;
  if (next_tokens_.empty()) {  // each rank's tokens and its vote (rows_first_choice.h)
    next_tokens_ = Buffer(ctx_.device(), DType::i32, positions + 1, MemCategory::gathered, tracker_);
    all_next_tokens_ = Buffer(ctx_.device(), DType::i32, (positions + 1) * static_cast<std::size_t>(comm_.world_size()),
                              MemCategory::gathered, tracker_);
  }
  next_tokens_work_.wait();  // the last step's gather read the buffer
  const std::span<const std::int32_t> tokens = peek();
  std::int32_t* mine = next_tokens_.data_as<std::int32_t>();
  if (tokens.size() == positions) {
    std::copy(tokens.begin(), tokens.end(), mine);
  } else {
    std::fill_n(mine, positions, -1);
  }
  // The plan's pieces may change after the first step (reduce_bucket_size: auto).
  mine[positions] = options_.lookup_rows_first == LookupRowsFirst::automatic
                        ? rows_first_choice_->vote(share_before_table(plan_, *rows_block_))
                        : kVoteRows;
  const TwoLevelAllGather::Issued issued = all_gather_->all_gather(next_tokens_.view(), all_next_tokens_.view(),
                                                                   ctx_.stream());
  next_tokens_work_ = issued.done;
  next_tokens_gathered_ = true;
  trace::record_parts(issued, "all_gather next tokens", {{"block", *rows_block_}}, other_works_, timeline_);
}

void ZeroEngine::forget_next_tokens() {
  next_tokens_gathered_ = rows_gathered_ = false;
  first_rows_.reset();
  // The caller sets every parameter anew (stages 1/2 all-gather the table again).
  if (table_rows_) table_rows_->work.wait();
  table_rows_.reset();
}

std::optional<RowsRead> ZeroEngine::next_forward_rows() {
  if (!std::exchange(next_tokens_gathered_, false)) return std::nullopt;
  exposed_.wait(next_tokens_work_, ctx_.stream(), timeline_, [] {
    return std::pair{std::string("wait next tokens"), nlohmann::json::object()};
  });
  const std::size_t block = *rows_block_;
  const models::LookupRows lookup = *model_.block(block).lookup_rows();
  // Every rank's tokens, each followed by its vote.
  const std::size_t positions = next_tokens_.numel() - 1;
  const std::int32_t* gathered = all_next_tokens_.data_as<std::int32_t>();
  std::vector<std::int32_t> tokens, votes;
  for (int r = 0; r < comm_.world_size(); ++r, gathered += positions + 1) {
    tokens.insert(tokens.end(), gathered, gathered + positions);
    votes.push_back(gathered[positions]);
  }
  if (options_.lookup_rows_first == LookupRowsFirst::automatic) {
    if (rows_first_choice_->decide(votes) && comm_.rank() == 0)
      log::info("zero_optimization.lookup_rows_first auto: from update {}, {} (rank 0: {})", optimizer_steps_,
                rows_first_choice_->whole_table()
                    ? "the whole table is gathered during the update: every rank's gather of it ends in time"
                    : "the next lookup's rows are gathered first: a rank's gather of the whole table ends too late",
                rows_first_choice_->measured());
    if (rows_first_choice_->whole_table()) return std::nullopt;
  }
  // A rank that does not know its next tokens sent -1s; a token outside the table is the next
  // load's error to report. Either way every rank gathers the whole table.
  const std::size_t table = token_rows(lookup, plan_.block(block).numel);
  if (std::any_of(tokens.begin(), tokens.end(),
                  [&](std::int32_t t) { return t < 0 || static_cast<std::size_t>(t) >= table; }))
    return std::nullopt;
  RowsRead rows = rows_read(lookup, tokens, acts_->T(), plan_.block(block).numel);
  const std::size_t parts = rows_part_numel(rows, plan_.block(block).chunk_numel, plan_.shards()) *
                            static_cast<std::size_t>(plan_.shards());
  if (parts * kFirstRowsMaxShareDivisor > plan_.block(block).padded_numel) return std::nullopt;
  return rows;
}

void ZeroEngine::sync_parameters() {
  if (gatherer_) gatherer_->invalidate();
  plan_update_gathers();  // the first step's blocks, as after an update without rows
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) publish_parameters(b, 0, plan_.block(b).chunk_numel);
}

double ZeroEngine::eval_loss(const LoadMicroBatch& load) {
  rows_gathered_ = false;  // this forward gathers the whole table (dropping the rows) for its own tokens
  load(*acts_, 0);
  forward_pass(*acts_, false);
  statistics_.begin();
  models::ops::add_mean_loss(ctx_, statistics_.loss_accumulator(), acts_->losses(), acts_->valid_targets());
  const double loss = statistics_.agree_eval_loss(comm_, timeline_);
  exposed_.take_ms();  // an evaluation's waits are not a training step's
  return loss;
}

std::vector<float> ZeroEngine::gather_full_params_f32() {
  const int world = plan_.shards();
  std::vector<float> shards;
  if (world == 1) {
    shards = download_f32(optimizer_.master(), ctx_.stream(), tracker_);
  } else {
    Buffer all(ctx_.device(), DType::f32, plan_.padded_total_numel(), MemCategory::workspace, tracker_);
    comm_.all_gather(optimizer_.master(), all.view(), ctx_.stream()).wait();
    shards = download_f32(all.view(), ctx_.stream(), tracker_);
  }
  std::vector<float> full;
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    const BlockPlacement& placement = plan_.block(b);
    for (int r = 0; r < world; ++r) {
      const PartitionPlan::Chunk chunk = plan_.chunk(b, r);
      auto from = shards.begin() + static_cast<std::ptrdiff_t>(r * plan_.shard_numel() + placement.shard_offset);
      full.insert(full.end(), from, from + static_cast<std::ptrdiff_t>(chunk.real));
    }
  }
  return full;
}

ZeroEngine::OptimizerShard ZeroEngine::download_optimizer_shard() {
  OptimizerShard shard;
  download_optimizer_shard(shard);
  return shard;
}

void ZeroEngine::download_optimizer_shard(OptimizerShard& into) {
  for (Work& work : param_sync_) work.wait();  // nothing may still write what we read
  optimizer_.download(ctx_.stream(), into);
}

void ZeroEngine::set_params_from_master(const std::vector<float>& master) {
  if (options_.stage == 3) {
    gatherer_->invalidate();  // a prefetch may still read the shard
    upload_f32(param_shard_.view(), master.data(), ctx_.stream(), tracker_);
    return;
  }
  // Each rank casts its own chunk (stage 0: the whole block); stages 1/2 then all-gather.
  const std::size_t owner = static_cast<std::size_t>(optimizer_.owner());
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    const BlockPlacement& placement = plan_.block(b);
    upload_f32(params_[b].slice(owner * placement.chunk_numel, placement.chunk_numel),
               master.data() + placement.shard_offset, ctx_.stream(), tracker_);
  }
}

void ZeroEngine::load_state(ShardSource& source, std::int64_t optimizer_steps, const LossScaler::State& loss_scaler) {
  for (Work& work : param_sync_) work.wait();
  forget_next_tokens();  // the batches may be restored to another position
  set_params_from_master(optimizer_.load(source, ctx_.stream()));
  sync_parameters();
  optimizer_steps_ = optimizer_steps;
  loss_scaler_.restore(loss_scaler);
}

double ZeroEngine::collective_ms(std::vector<Work>& works) {
  std::vector<Work> all = std::exchange(works, {});
  for (Work& w : reducer_->take_completed_works()) all.push_back(std::move(w));
  if (gatherer_)
    for (Work& w : gatherer_->take_completed_works()) all.push_back(std::move(w));
  if (rows_exchange_)
    for (Work& w : rows_exchange_->take_completed_works()) all.push_back(std::move(w));
  double total = 0.0;
  std::vector<Work> running;
  for (Work& work : all) {
    if (work.is_completed()) {
      total += work.duration_ms();
    } else {
      running.push_back(std::move(work));  // counted in the step it completes in
    }
  }
  works = std::move(running);
  return total;
}

}  // namespace zt
