#include "zero/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "models/init.h"
#include "models/model_state.h"
#include "optim/grad_stats.h"
#include "runtime/core/copy.h"
#include "runtime/core/cpu_stream.h"
#include "runtime/core/log.h"
#include "zero/device_ops.h"
#include "zero/exposed_wait.h"
#include "zero/memory_plan.h"
#if ZT_HAVE_CUDA
#include "runtime/core/cuda/cuda_stream.h"
#endif

namespace zt {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Where traced work on a stream starts; records nothing when no timeline is recording.
Event trace_mark(const trace::Timeline* timeline, Stream& stream) { return timeline ? stream.record() : Event{}; }

// Waits for a collective the host cannot go on without, on the host lane of the timeline if any;
// returns how long that took.
double wait_traced(const Work& work, trace::Timeline* timeline, const char* what) {
  const auto start = Clock::now();
  work.wait();
  if (timeline) timeline->add_host_span(trace::Lane::host, what, start, Clock::now(), {{"sequence", work.sequence()}});
  return ms_since(start);
}

// Host values converted to dst's dtype and copied to dst's device, synchronously.
void upload(Stream& stream, BufferView dst, const float* host, MemoryTracker& tracker) {
  Buffer staging = Buffer::host(dst.dtype, dst.numel, MemCategory::workspace, Buffer::HostMemory::pageable, tracker);
  convert_host(host, DType::f32, staging.data(), dst.dtype, dst.numel);
  copy_async(dst, staging.view(), stream);
  stream.synchronize();
}

std::vector<float> download_f32(Stream& stream, BufferView src, MemoryTracker& tracker) {
  Buffer staging = Buffer::host(src.dtype, src.numel, MemCategory::workspace, Buffer::HostMemory::pageable, tracker);
  copy_async(staging.view(), src, stream);
  stream.synchronize();
  std::vector<float> values(src.numel);
  convert_host(staging.data(), src.dtype, values.data(), DType::f32, src.numel);
  return values;
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
  if (options.stage < 2)
    for (std::size_t b = 0; b < blocks; ++b)
      block_grads_[b] = Buffer(device, dtype, plan_.block(b).numel, MemCategory::grads, tracker);
  grad_shard_ = Buffer(device, DType::f32, plan_.shard_numel(), MemCategory::grads, tracker);
  master_ = Buffer(device, DType::f32, plan_.shard_numel(), MemCategory::optimizer, tracker);
  exp_avg_ = Buffer(device, DType::f32, plan_.shard_numel(), MemCategory::optimizer, tracker);
  exp_avg_sq_ = Buffer(device, DType::f32, plan_.shard_numel(), MemCategory::optimizer, tracker);
  stats_ = Buffer(device, DType::f32, 5, MemCategory::workspace, tracker);
  param_sync_.resize(blocks);
  reducer_ = std::make_unique<GradientReducer>(plan_, tied_to_, comm, ctx.stream(), device, options.comm_dtype,
                                               options.overlap_comm, tracker);
  if (options.stage == 3) {
    gatherer_ = std::make_unique<ParamGatherer>(plan_, comm, ctx.stream(), device, dtype,
                                                options.stage3_prefetch_bucket_size,
                                                options.stage3_param_persistence_threshold, tracker);
    gatherer_->set_shard(param_shard_.view());
  }
  acts_ = std::make_unique<models::Activations>(model, micro_batch, seq_len, device, dtype, tracker);
  build_update_segments();
}

ZeroEngine::~ZeroEngine() {
  // Collectives still in flight write into buffers about to be freed: let them finish.
  for (Work& work : param_sync_) {
    try {
      work.wait();
    } catch (const std::exception& e) {
      log::error("parameter all-gather failed while shutting down: {}", e.what());
    }
  }
}

void ZeroEngine::build_update_segments() {
  const int rank = options_.stage == 0 ? 0 : comm_.rank();
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    const BlockPlacement& placement = plan_.block(b);
    const std::size_t begin = static_cast<std::size_t>(rank) * placement.chunk_numel;
    const std::size_t end = std::min(placement.numel, begin + placement.chunk_numel);
    for (const models::ParamTensor& t : model_.block(b).layout().tensors()) {
      std::size_t lo = std::max(begin, t.offset), hi = std::min(end, t.offset + t.numel);
      if (lo >= hi) continue;
      bool decay = t.decay ? (options_.decay_embeddings || !t.embedding) : options_.decay_bias_and_norm;
      UpdateSegment* last = segments_.empty() ? nullptr : &segments_.back();
      if (last && last->block == b && last->decay == decay && last->block_offset + last->count == lo) {
        last->count += hi - lo;
      } else {
        segments_.push_back({b, lo, placement.shard_offset + (lo - begin), hi - lo, decay});
      }
    }
  }
}

void ZeroEngine::init_parameters(std::uint64_t seed) {
  const int rank = options_.stage == 0 ? 0 : comm_.rank();
  std::vector<float> master(plan_.shard_numel(), 0.0f);
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    const BlockPlacement& placement = plan_.block(b);
    std::vector<float> values(placement.padded_numel, 0.0f);
    models::init_block_params(model_.block(b).layout(), seed, b, values.data());
    std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(rank * placement.chunk_numel), placement.chunk_numel,
                master.begin() + static_cast<std::ptrdiff_t>(placement.shard_offset));
    if (options_.stage < 3) upload(ctx_.stream(), params_[b].view(), values.data(), tracker_);
  }
  upload(ctx_.stream(), master_.view(), master.data(), tracker_);
  if (options_.stage == 3) {
    upload(ctx_.stream(), param_shard_.view(), master.data(), tracker_);
    gatherer_->invalidate();
  }
  zero_ops::fill_zero(ctx_.stream(), exp_avg_.view());
  zero_ops::fill_zero(ctx_.stream(), exp_avg_sq_.view());
  optimizer_steps_ = 0;
}

void ZeroEngine::set_timeline(trace::Timeline* timeline) {
  timeline_ = timeline;
  reducer_->set_timeline(timeline);
  if (gatherer_) gatherer_->set_timeline(timeline);
}

models::BlockParams ZeroEngine::block_params(std::size_t block, const std::vector<BufferView>& gathered) const {
  auto own = [&](std::size_t b, std::size_t index) {
    std::size_t numel = plan_.block(b).numel;
    return options_.stage == 3 ? gathered.at(index).slice(0, numel) : params_[b].slice(0, numel);
  };
  models::BlockParams p;
  p.params = own(block, 0);
  if (tied_to_[block]) p.tied_params = own(*tied_to_[block], 1);
  return p;
}

BufferView ZeroEngine::block_grad(std::size_t block) {
  Buffer& grad = block_grads_.at(block);
  if (grad.empty() && plan_.block(block).numel > 0) {
    // Stages 2/3: a gradient lives from the block's (or its tied user's) backward until it is
    // copied into its bucket; it is working memory, not a model state.
    grad = Buffer(ctx_.device(), options_.compute_dtype, plan_.block(block).numel, MemCategory::workspace, tracker_);
    zero_ops::fill_zero(ctx_.stream(), grad.view());
  }
  return grad.view();
}

void ZeroEngine::forward_pass(models::Activations& acts, double& exposed_ms, bool backward_follows) {
  const std::size_t n = model_.num_blocks();
  if (gatherer_) {
    std::vector<std::vector<std::size_t>> steps;
    auto uses = [&](std::size_t b) {
      std::vector<std::size_t> blocks{b};
      if (tied_to_[b]) blocks.push_back(*tied_to_[b]);
      return blocks;
    };
    for (std::size_t b = 0; b < n; ++b) steps.push_back(uses(b));
    if (backward_follows)
      for (std::size_t b = n; b-- > 0;) steps.push_back(uses(b));
    gatherer_->begin_pass(std::move(steps));
  }
  for (std::size_t b = 0; b < n; ++b) {
    std::vector<BufferView> gathered;
    if (gatherer_) {
      gathered = gatherer_->enter(b, exposed_ms);
    } else {
      for (std::size_t needed : {b, tied_to_[b].value_or(b)}) {
        exposed_ms += wait_exposed(param_sync_[needed], ctx_.stream(), timeline_, [&] {
          return std::pair{fmt::format("wait params {}", model_.block(needed).name()),
                           nlohmann::json{{"block", needed}}};
        });
      }
    }
    Event begin = trace_mark(timeline_, ctx_.stream());
    models::forward_block(ctx_, model_, b, block_params(b, gathered), acts);
    if (timeline_)
      timeline_->add_stream_span(trace::Lane::compute, fmt::format("forward {}", model_.block(b).name()), begin,
                                 ctx_.stream().record(), {{"block", b}});
    if (gatherer_) gatherer_->leave(b);
  }
  if (gatherer_ && !backward_follows) gatherer_->end_pass();
}

double ZeroEngine::forward_backward(models::Activations& acts, bool boundary, double& exposed_ms) {
  const std::size_t n = model_.num_blocks();
  forward_pass(acts, exposed_ms, true);
  double loss = acts.mean_loss();
  const bool reduce_now = options_.stage >= 2 || boundary;
  if (reduce_now) reducer_->begin(grad_shard_.view(), [this](std::size_t b) { return block_grad(b); });
  const double scale = options_.loss_scaling ? loss_scaler_.scale() : 1.0;
  const float dloss_multiplier = static_cast<float>(scale / options_.gradient_accumulation_steps);
  for (std::size_t b = n; b-- > 0;) {
    const std::size_t step = n + (n - 1 - b);
    std::vector<BufferView> gathered;
    if (gatherer_) gathered = gatherer_->enter(step, exposed_ms);
    BufferView tied_grad = tied_to_[b] ? block_grad(*tied_to_[b]) : BufferView{};
    Event begin = trace_mark(timeline_, ctx_.stream());
    models::backward_block(ctx_, model_, b, block_params(b, gathered), block_grad(b), tied_grad, acts,
                           dloss_multiplier);
    if (timeline_)
      timeline_->add_stream_span(trace::Lane::compute, fmt::format("backward {}", model_.block(b).name()), begin,
                                 ctx_.stream().record(), {{"block", b}});
    if (gatherer_) gatherer_->leave(step);
    if (!reduce_now) continue;
    for (std::size_t packed : reducer_->block_ready(b))
      if (options_.stage >= 2) retired_.retire(std::move(block_grads_[packed]), ctx_.stream());
  }
  if (reduce_now) {
    reducer_->finish();
    exposed_ms += reducer_->exposed_ms();
  }
  if (gatherer_) gatherer_->end_pass();
  return loss;
}

StepStats ZeroEngine::train_step(const LoadMicroBatch& load, double lr, int local_stop_signal) {
  const auto start = Clock::now();
  StepStats stats;
  double loss_sum = 0.0;
  for (int micro = 0; micro < options_.gradient_accumulation_steps; ++micro) {
    const auto load_start = Clock::now();
    load(*acts_, micro);
    if (timeline_)
      timeline_->add_host_span(trace::Lane::host, "load batch", load_start, Clock::now(), {{"micro_batch", micro}});
    loss_sum += forward_backward(*acts_, micro + 1 == options_.gradient_accumulation_steps, stats.exposed_comm_ms);
  }
  Event optimizer_begin = trace_mark(timeline_, ctx_.stream());
  optimizer_step(lr, loss_sum / options_.gradient_accumulation_steps, local_stop_signal, stats);
  if (timeline_)
    timeline_->add_stream_span(trace::Lane::compute, "optimizer step", optimizer_begin, ctx_.stream().record());
  stats.comm_ms = collective_ms(other_works_);
  stats.step_ms = ms_since(start);
  retired_.free_completed();
  return stats;
}

void ZeroEngine::optimizer_step(double lr, double local_loss, int local_stop_signal, StepStats& stats) {
  Stream& stream = ctx_.stream();
  // One small all-reduce (sum) before the update carries everything the ranks must agree on: the
  // squared norm of each shard (stage 0: every rank holds the whole gradient, so rank 0 alone
  // contributes it), whether any rank saw inf/NaN, the loss, and which ranks received a stop
  // signal (counted per signal, as a sum cannot carry a maximum). Issuing it before the stage 1/2
  // parameter all-gathers keeps it from queueing behind them on the comm stream.
  GradStats local = local_grad_stats();
  const bool whole_gradient = options_.stage == 0;
  std::vector<float> values = {
      whole_gradient && comm_.rank() != 0 ? 0.0f : static_cast<float>(local.sum_of_squares),
      local.non_finite ? 1.0f : 0.0f, static_cast<float>(local_loss),
      local_stop_signal == SIGTERM ? 1.0f : 0.0f, local_stop_signal == SIGINT ? 1.0f : 0.0f};
  upload(stream, stats_.view(), values.data(), tracker_);
  Work work = comm_.all_reduce(stats_.view(), ReduceOp::sum, stream);
  if (timeline_) timeline_->add_collective("all_reduce grad norm, loss", work);
  stats.exposed_comm_ms += wait_traced(work, timeline_, "wait grad norm, loss");
  other_works_.push_back(work);
  std::vector<float> global = download_f32(stream, stats_.view(), tracker_);
  const double sum_of_squares = whole_gradient ? local.sum_of_squares : global[0];
  const bool non_finite = global[1] != 0.0f || !std::isfinite(sum_of_squares);
  stats.loss = static_cast<double>(global[2]) / comm_.world_size();
  stats.stop_signal = global[3] > 0.0f ? SIGTERM : global[4] > 0.0f ? SIGINT : 0;
  const double scale = options_.loss_scaling ? loss_scaler_.scale() : 1.0;
  stats.loss_scale = scale;
  stats.grad_norm = std::sqrt(sum_of_squares) / scale;
  stats.skipped = options_.loss_scaling ? loss_scaler_.update(non_finite) : non_finite;
  if (!stats.skipped) {
    ++optimizer_steps_;
    const float multiplier = clip_coefficient(stats.grad_norm, options_.gradient_clipping) / static_cast<float>(scale);
    for (const UpdateSegment& s : segments_) {
      AdamWStep step;
      step.master = master_.data_as<float>() + s.shard_offset;
      step.exp_avg = exp_avg_.data_as<float>() + s.shard_offset;
      step.exp_avg_sq = exp_avg_sq_.data_as<float>() + s.shard_offset;
      step.grad = grad_shard_.data_as<float>() + s.shard_offset;
      step.params_out = options_.stage < 3
                            ? params_[s.block].slice(s.block_offset, s.count).data
                            : param_shard_.slice(s.shard_offset, s.count).data;
      step.params_dtype = options_.compute_dtype;
      step.count = s.count;
      step.step = optimizer_steps_;
      step.grad_multiplier = multiplier;
      step.hyper = options_.adamw;
      step.hyper.lr = static_cast<float>(lr);
      if (!s.decay) step.hyper.weight_decay = 0.0f;
      if (ctx_.device().is_cpu()) {
        adamw_step_host(step);
      } else {
#if ZT_HAVE_CUDA
        adamw_step_cuda(step, dynamic_cast<CudaStream&>(stream).handle());
#endif
      }
    }
  }
  zero_ops::fill_zero(stream, grad_shard_.view());
  if (options_.stage < 2)
    for (Buffer& grad : block_grads_) zero_ops::fill_zero(stream, grad.view());
  if (!stats.skipped) sync_parameters();
}

void ZeroEngine::sync_parameters() {
  if (options_.stage == 3) {
    gatherer_->invalidate();
    return;
  }
  if (options_.stage == 0) return;  // every rank updated every parameter
  const std::size_t r = static_cast<std::size_t>(comm_.rank());
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    const BlockPlacement& placement = plan_.block(b);
    BufferView mine = params_[b].slice(r * placement.chunk_numel, placement.chunk_numel);
    param_sync_[b] = comm_.all_gather(mine, params_[b].view(), ctx_.stream());
    if (timeline_)
      timeline_->add_collective(fmt::format("all_gather params {}", model_.block(b).name()), param_sync_[b],
                                {{"block", b}});
    other_works_.push_back(param_sync_[b]);
  }
}

double ZeroEngine::eval_loss(const LoadMicroBatch& load) {
  load(*acts_, 0);
  double exposed_ms = 0.0;
  forward_pass(*acts_, exposed_ms, false);
  std::vector<float> loss = {acts_->mean_loss(), 0.0f, 0.0f, 0.0f, 0.0f};
  upload(ctx_.stream(), stats_.view(), loss.data(), tracker_);
  Work work = comm_.all_reduce(stats_.view(), ReduceOp::avg, ctx_.stream());
  if (timeline_) timeline_->add_collective("all_reduce eval loss", work);
  wait_traced(work, timeline_, "wait eval loss");
  return download_f32(ctx_.stream(), stats_.view(), tracker_)[0];
}

std::vector<float> ZeroEngine::gather_full_params_f32() {
  const int world = plan_.world_size();
  std::vector<float> shards;
  if (world == 1) {
    shards = download_f32(ctx_.stream(), master_.view(), tracker_);
  } else {
    Buffer all(ctx_.device(), DType::f32, plan_.padded_total_numel(), MemCategory::workspace, tracker_);
    comm_.all_gather(master_.view(), all.view(), ctx_.stream()).wait();
    shards = download_f32(ctx_.stream(), all.view(), tracker_);
  }
  std::vector<float> full;
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    const BlockPlacement& placement = plan_.block(b);
    std::size_t remaining = placement.numel;
    for (int r = 0; r < world && remaining > 0; ++r) {
      std::size_t take = std::min(remaining, placement.chunk_numel);
      auto from = shards.begin() + static_cast<std::ptrdiff_t>(r * plan_.shard_numel() + placement.shard_offset);
      full.insert(full.end(), from, from + static_cast<std::ptrdiff_t>(take));
      remaining -= take;
    }
  }
  return full;
}

std::vector<OwnedRange> ZeroEngine::owned_ranges() const {
  const std::size_t rank = static_cast<std::size_t>(shard_rank());
  std::vector<OwnedRange> ranges;
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    const BlockPlacement& placement = plan_.block(b);
    const std::size_t begin = rank * placement.chunk_numel;
    const std::size_t end = std::min(placement.numel, begin + placement.chunk_numel);
    if (begin < end) ranges.push_back({b, begin, end - begin, placement.shard_offset});
  }
  return ranges;
}

ZeroEngine::OptimizerShard ZeroEngine::download_optimizer_shard() {
  for (Work& work : param_sync_) work.wait();  // nothing may still write what we read
  return {download_f32(ctx_.stream(), master_.view(), tracker_), download_f32(ctx_.stream(), exp_avg_.view(), tracker_),
          download_f32(ctx_.stream(), exp_avg_sq_.view(), tracker_)};
}

void ZeroEngine::load_state(ShardSource& source, std::int64_t optimizer_steps, const LossScaler::State& loss_scaler) {
  for (Work& work : param_sync_) work.wait();
  // Padding stays zero, as init_parameters leaves it: AdamW never touches it.
  std::vector<float> master(plan_.shard_numel(), 0.0f), exp_avg(master.size(), 0.0f), exp_avg_sq(master.size(), 0.0f);
  for (const OwnedRange& r : owned_ranges())
    source.read(r.block, r.begin, r.count, master.data() + r.shard_offset, exp_avg.data() + r.shard_offset,
                exp_avg_sq.data() + r.shard_offset);
  upload(ctx_.stream(), master_.view(), master.data(), tracker_);
  upload(ctx_.stream(), exp_avg_.view(), exp_avg.data(), tracker_);
  upload(ctx_.stream(), exp_avg_sq_.view(), exp_avg_sq.data(), tracker_);
  const std::size_t rank = static_cast<std::size_t>(shard_rank());
  if (options_.stage == 3) {
    upload(ctx_.stream(), param_shard_.view(), master.data(), tracker_);
  } else {
    // Each rank casts its own chunk (stage 0: the whole block); stages 1/2 then all-gather.
    for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
      const BlockPlacement& placement = plan_.block(b);
      upload(ctx_.stream(), params_[b].slice(rank * placement.chunk_numel, placement.chunk_numel),
             master.data() + placement.shard_offset, tracker_);
    }
  }
  sync_parameters();
  optimizer_steps_ = optimizer_steps;
  loss_scaler_.restore(loss_scaler);
}

GradStats ZeroEngine::local_grad_stats() {
  if (ctx_.device().is_cpu()) return grad_stats_host(grad_shard_.data_as<float>(), grad_shard_.numel());
#if ZT_HAVE_CUDA
  // A double and an int accumulated on the device, then 16 bytes to the host.
  Buffer accumulators(ctx_.device(), DType::f32, 4, MemCategory::workspace, tracker_);
  auto* sum = static_cast<double*>(accumulators.data());
  auto* flag = reinterpret_cast<int*>(sum + 1);
  Stream& stream = ctx_.stream();
  zero_ops::fill_zero(stream, accumulators.view());
  grad_stats_cuda(grad_shard_.data_as<float>(), grad_shard_.numel(), sum, flag, dynamic_cast<CudaStream&>(stream).handle());
  Buffer host = Buffer::host(DType::f32, 4, MemCategory::workspace, Buffer::HostMemory::pageable, tracker_);
  copy_async(host.view(), accumulators.view(), stream);
  stream.synchronize();
  GradStats stats;
  stats.sum_of_squares = *static_cast<const double*>(host.data());
  stats.non_finite = reinterpret_cast<const int*>(static_cast<const double*>(host.data()) + 1)[0] != 0 ||
                     !std::isfinite(stats.sum_of_squares);
  return stats;
#else
  throw std::logic_error("CUDA gradient statistics in a build without CUDA");
#endif
}

double ZeroEngine::collective_ms(std::vector<Work>& works) {
  std::vector<Work> all = std::exchange(works, {});
  for (Work& w : reducer_->take_completed_works()) all.push_back(std::move(w));
  if (gatherer_)
    for (Work& w : gatherer_->take_completed_works()) all.push_back(std::move(w));
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
