#include "runtime/train/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>

#include "comm/comm_options.h"
#include "runtime/checkpoint/checkpoint_writer.h"
#include "comm/make_communicator.h"
#include "models/compute_context.h"
#include "models/cpu/blas_kernels.h"
#include "models/family.h"
#include "core/cpu_kernel_choice.h"
#include "core/device_ops.h"
#include "core/error.h"
#include "core/log.h"
#include "core/safe_file.h"
#include "runtime/train/cpu_threads.h"
#include "runtime/train/gpu_peak.h"
#include "runtime/train/job_settings.h"
#include "runtime/train/memory_check.h"
#include "zero/memory_plan.h"

namespace zt {
namespace {

using Clock = std::chrono::steady_clock;

std::string format_duration(double seconds) {
  // An ETA of 10^12 steps is a valid config; beyond about 30 years the number says nothing more,
  // and a double out of the range of `long` must not reach lround.
  constexpr double kLongest = 1e9;
  if (!(seconds < kLongest)) return std::isnan(seconds) ? "?" : "> 30 years";
  auto s = static_cast<long>(std::lround(std::max(seconds, 0.0)));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

// ZT_TEST_NAN_LR_AT_STEP=<step>: a test hook that makes a run non-finite at a known step on every
// CPU (a real divergence depends on BLAS rounding). Unset in production; announced when set.
std::int64_t nan_lr_step_from_environment() {
  const char* value = std::getenv("ZT_TEST_NAN_LR_AT_STEP");
  if (value == nullptr) return 0;
  std::int64_t step = 0;
  const std::string_view text(value);
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), step);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || step < 1)
    throw UserError(fmt::format("ZT_TEST_NAN_LR_AT_STEP='{}': expected a step number >= 1", text));
  log::warn("test hook ZT_TEST_NAN_LR_AT_STEP={}: the update of step {} uses a NaN learning rate", step, step);
  return step;
}

std::string format_rate(double tokens_per_s) {
  if (tokens_per_s >= 1e6) return fmt::format("{:.2f}M", tokens_per_s / 1e6);
  if (tokens_per_s >= 1e3) return fmt::format("{:.1f}k", tokens_per_s / 1e3);
  return fmt::format("{:.0f}", tokens_per_s);
}

void log_cpu_compute(const Config& config, int local_ranks, int threads) {
  const char* replaced = std::getenv("ZT_OPENBLAS_CORETYPE_REPLACED");
  log::debug("CPU compute: {} thread(s) per rank (train.cpu_threads = {}, {} rank(s) on this host); OpenBLAS {} "
             "kernels{} ({})",
             threads, config.train.cpu_threads, local_ranks, models::cpu::blas_core_name(),
             replaced ? fmt::format(", chosen from the CPU flags instead of {}", replaced) : "",
             models::cpu::blas_config());
}

// GFLOP/s of one rank's sgemm: train.cpu_peak_gflops, or measured with this rank's threads on the
// model family's widest product (GPT-2: the MLP's (B*T, C) x (C, 4C); Llama: gate and up,
// (B*T, C) x (C, 2I); the MLP model: 512^3).
double cpu_peak_gflops(const Config& config, int micro_batch, int seq_len) {
  if (config.train.cpu_peak_gflops > 0) return config.train.cpu_peak_gflops;
  const models::GemmShape p = models::model_family(config.model.type).widest_product(config.model, micro_batch, seq_len);
  const double gflops = models::cpu::measure_sgemm_gflops(p.M, p.N, p.K, 0.2);
  log::debug("sgemm ceiling for MFU: {:.1f} GFLOP/s per rank at ({}, {}) x ({}, {})", gflops, p.M, p.K, p.K, p.N);
  return gflops;
}

}  // namespace

Trainer::Trainer(const Config& config, MPI_Comm job) : config_(config), schedule_(lr_schedule(config)) {
  log::set_level(config.logging.level);
  log::set_progress_on_all_ranks(config.logging.all_ranks);
  LaunchInfo launch = query_launch_info(job);
  log::set_rank(launch.rank);
  // Flight records of an earlier run in this run_dir would confuse a timeout's report: rank 0
  // removes them before the ranks' first collective (the agreement check), after which they write.
  const std::filesystem::path flight_records = std::filesystem::path(config.logging.run_dir) / "flight_record";
  std::error_code ignored;
  if (launch.rank == 0) std::filesystem::remove_all(flight_records, ignored);
  nan_lr_step_ = nan_lr_step_from_environment();
  // Ranks that disagree on the config or the data stop here, all of them, before the first collective.
  guard_ = std::make_unique<RunGuard>(config, job);
  const Device device = resolve_device(config, launch.local_rank, launch.local_size);
  activate(device);

  CommOptions comm_options;
  static_cast<CommSettings&>(comm_options) = config.comm;  // the section is the communicator's settings
  // A failure here only means timeouts cannot name the missing ranks: the watchdog warns once.
  std::filesystem::create_directories(flight_records, ignored);
  comm_options.flight_record_dir = flight_records.string();
  comm_ = make_communicator(comm_options, device, job);

  check_settings_for_world(config, comm_->world_size());
  model_ = build_model(config.model);
  if (config.emulation.enabled()) {
    ctx_ = models::ComputeContext::emulated(emulated_rates(config.emulation), config.precision.dtype);
    log::info("emulated device: {} TFLOP/s x MFU {} = {:.1f} TFLOP/s, {} GB/s; blocks wait instead of computing (a "
              "measuring instrument: the loss does not train)",
              config.emulation.tflops, config.emulation.mfu, config.emulation.tflops * config.emulation.mfu,
              config.emulation.memory_gbps);
  } else if (device.is_cpu()) {
    const int threads = cpu_threads_for_this_rank(config.train.cpu_threads, launch.local_size, launch.world_size);
    ctx_ = models::ComputeContext::cpu(threads, config.precision.dtype);
    set_reference_cpu_kernels(config.train.cpu_reference_kernels);
    log_cpu_compute(config, launch.local_size, threads);
  } else {
    ctx_ = models::ComputeContext::cuda(device.index, config.precision.dtype,
                                        {.allow_tf32 = config.precision.tf32,
                                         .cudnn_attention = config.train.cudnn_attention});
  }
  micro_batch_ = static_cast<int>(config.train.train_micro_batch_size_per_gpu);
  seq_len_ = models::positions_per_row(config.model, effective_seq_len(config));
  // Before the engine allocates: a model too big for the machine stops here with both numbers.
  guard_->check_memory(rank_memory_problem(
      plan_memory(*model_, zero_options(config), comm_->world_size(), micro_batch_, seq_len_, device), device,
      launch.local_size));
  engine_ = std::make_unique<ZeroEngine>(*model_, *ctx_, *comm_, zero_options(config), micro_batch_, seq_len_);

  const auto seed = static_cast<std::uint64_t>(config.train.seed);
  if (!models::model_family(config.model.type).reads_tokens()) {
    train_batches_ = std::make_unique<SyntheticBatches>(*model_, micro_batch_, comm_->rank(), comm_->world_size(), seed);
    val_batches_ = std::make_unique<SyntheticBatches>(*model_, micro_batch_, comm_->rank(), comm_->world_size(), ~seed);
  } else {
    data::TokenLoaderOptions options{config.data.train_files, micro_batch_, seq_len_, comm_->rank(),
                                     comm_->world_size(), seed, static_cast<int>(config.model.vocab_size),
                                     data::WindowOrder::shuffled};
    train_batches_ = std::make_unique<TokenBatches>(options, /*prefetch=*/device.is_cuda());
    if (!config.data.val_files.empty() && config.train.eval_interval > 0) {
      options.shard_pattern = config.data.val_files;
      options.order = data::WindowOrder::sequential;
      val_batches_ = std::make_unique<TokenBatches>(options);
    }
  }

  restore_or_init();
  if (config.checkpoint.async_save && config.checkpoint.interval > 0) {
    background_saves_ = std::make_unique<checkpoint::BackgroundCheckpointWriter>();
    // The snapshot buffer of a rank that writes a shard is mapped now, at start-up: the first save
    // then costs a step no more than the later ones (first-touch page faults of 12 bytes per
    // parameter of the shard). At stage 0 only rank 0 writes.
    if (comm_->rank() < engine_->plan().shards()) engine_->download_optimizer_shard(*background_saves_->snapshot());
  }
  prepare_sampling();
  // An unwritable checkpoint.dir fails now rather than at the first save (master weights, m and v: 12 B/param).
  guard_->check_checkpoint_dir(checkpoint_root_, model_->param_count() * 3 * sizeof(float));

  const double world = comm_->world_size();
  const double accumulation = static_cast<double>(config.train.gradient_accumulation_steps);
  tokens_per_step_ = static_cast<double>(micro_batch_) * seq_len_ * accumulation * world;
  flops_per_step_ = model_->flops_per_step(micro_batch_, seq_len_) * accumulation * world;
  if (device.is_cpu()) {
    peak_flops_per_s_ = cpu_peak_gflops(config, micro_batch_, seq_len_) * 1e9 * world;
  } else {
    const std::string gpu = device_ops(device).device_name(device);
    peak_flops_per_s_ = gpu_peak_flops(gpu, config.precision.dtype) * world;
    if (peak_flops_per_s_ > 0)
      log::debug("MFU against {}'s dense {} peak, {:.0f} TFLOP/s per rank", gpu, dtype_name(config.precision.dtype),
                 peak_flops_per_s_ / world / 1e12);
    else
      log::info("no MFU: {} is not in zerotrain's table of GPU peaks (runtime/train/gpu_peak.cpp)", gpu);
  }

  if (comm_->rank() == 0) {
    std::filesystem::path run_dir(config.logging.run_dir);
    std::error_code error;
    std::filesystem::create_directories(run_dir, error);
    if (error)
      throw UserError(fmt::format("logging.run_dir {}: cannot create it: {}", run_dir.string(), error.message()));
    // Renamed into place and appended with O_NOFOLLOW: a link planted in run_dir is never written through.
    write_file_atomically(run_dir / "config.yaml", config_to_yaml(config));
    metrics_ = std::make_unique<MetricsLog>(run_dir / "metrics.jsonl", config.logging.on_write_error);
  }
  log::progress("training {} ({} parameters) on {} rank(s), device {}, ZeRO stage {}, overlap_comm {}, {} tokens/step{}",
                model_->name(), model_->param_count(), comm_->world_size(), device.str(),
                config.zero_optimization.stage, config.zero_optimization.overlap_comm, tokens_per_step_,
                peak_flops_per_s_ > 0 && device.is_cpu()
                    ? fmt::format(", sgemm ceiling {:.1f} GFLOP/s per rank", peak_flops_per_s_ / world / 1e9)
                    : "");
  if (config.train.activation_checkpointing > 0)
    log::progress("activation checkpointing {} (MFU counts the model's FLOPs, not the recompute)",
                  activation_checkpointing_summary(*model_, zero_options(config), micro_batch_, seq_len_, device));
}

Trainer::~Trainer() = default;

double Trainer::mfu(double step_ms) const { return flops_per_step_ / (step_ms / 1000.0) / peak_flops_per_s_; }

double Trainer::rate(std::int64_t step) const {
  if (step == nan_lr_step_) return std::numeric_limits<double>::quiet_NaN();
  // DeepSpeed's engine steps its scheduler only after an update it applied (not after a step
  // skipped for fp16 overflow): its schedulers here count the updates; zerotrain's own, the steps.
  return schedule_.counts_updates() ? schedule_.at(engine_->optimizer_steps() + 1) : schedule_.at(step);
}

StepStats Trainer::step(std::int64_t step) {
  const double lr = rate(step);
  return engine_->train_step(
      [&](models::Activations& acts, int) { train_batches_->next(acts); }, lr, guard_->local_stop_signal(),
      [&] {
        const models::TokenBatch* next = train_batches_->peek();
        return next ? std::span<const std::int32_t>(next->tokens) : std::span<const std::int32_t>();
      });
}

double Trainer::validate() {
  val_batches_->restore({});
  double sum = 0.0;
  for (std::int64_t i = 0; i < config_.train.eval_steps; ++i)
    sum += engine_->eval_loss([&](models::Activations& acts, int) { val_batches_->next(acts); });
  return sum / static_cast<double>(config_.train.eval_steps);
}

MemoryTracker::Space Trainer::memory_space() const {
  return ctx_->device().is_cpu() ? MemoryTracker::Space::host : MemoryTracker::Space::device;
}

nlohmann::json Trainer::memory_fields() const {
  const MemoryTracker& tracker = MemoryTracker::process();
  nlohmann::json fields;
  for (int i = 0; i < kMemCategoryCount; ++i) {
    auto category = static_cast<MemCategory>(i);
    fields[fmt::format("mem_{}", mem_category_name(category))] = tracker.stats(memory_space(), category).current;
  }
  fields["mem_peak"] = tracker.total(memory_space()).peak;
  if (ctx_->device().is_cuda()) fields["mem_outside"] = device_memory_outside();
  return fields;
}

std::int64_t Trainer::device_memory_outside() const {
  // What nvidia-smi shows in use minus what zerotrain allocated itself: the CUDA context, NCCL's
  // and cuBLAS's workspaces (and any other process on the GPU).
  const Device device = ctx_->device();
  const DeviceMemoryInfo info = device_ops(device).memory_info(device);
  const std::int64_t ours = MemoryTracker::process().total(MemoryTracker::Space::device).current;
  return std::max<std::int64_t>(0, info.total - info.free - ours);
}

void Trainer::report(std::int64_t step, const StepStats& stats, double lr) {
  const double tokens_per_s = tokens_per_step_ / (stats.step_ms / 1000.0);
  if (metrics_) {
    nlohmann::json record = {{"step", step},
                             {"loss", stats.loss},
                             {"lr", lr},
                             {"grad_norm", stats.grad_norm},
                             {"loss_scale", stats.loss_scale},
                             {"skipped", stats.skipped},
                             {"tokens_per_s", tokens_per_s},
                             {"step_ms", stats.step_ms},
                             {"compute_ms", stats.step_ms - stats.exposed_comm_ms},
                             {"comm_ms", stats.comm_ms},
                             {"exposed_comm_ms", stats.exposed_comm_ms},
                             {"comm_cpu_ms", stats.comm_cpu_ms},
                             {"allocs", stats.allocations},
                             {"model_flops_per_s", flops_per_step_ / (stats.step_ms / 1000.0)}};
    if (peak_flops_per_s_ > 0) record["mfu"] = mfu(stats.step_ms);
    if (stats.cpu_wait_ms) record["cpu_wait_ms"] = *stats.cpu_wait_ms;
    record.update(memory_fields());
    metrics_->write(record);
  }
  if (std::optional<std::string> warning = cpu_watch_.add(step, stats)) log::warn("{}", *warning);
  const std::int64_t total = config_.train.steps;
  const bool log_now = step == first_step_ || step == total || step % config_.logging.log_interval == 0;
  if (!log_now) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
  const double eta = elapsed / static_cast<double>(step - first_step_ + 1) * static_cast<double>(total - step);
  std::string scale = config_.precision.dtype == DType::f16 ? fmt::format(" | scale {:g}", stats.loss_scale) : "";
  std::string mfu_text = peak_flops_per_s_ > 0 ? fmt::format(" | MFU {:.0f}%", 100.0 * mfu(stats.step_ms)) : "";
  log::progress("step {}/{} | loss {:.4f} | lr {:.2e} | grad norm {:.3f}{}{} | {} tok/s{} | step {:.1f} ms | "
                "comm {:.1f} ms, exposed {:.1f} ms | peak mem {} | ETA {}",
                step, total, stats.loss, lr, stats.grad_norm, scale, stats.skipped ? " | SKIPPED" : "",
                format_rate(tokens_per_s), mfu_text, stats.step_ms, stats.comm_ms, stats.exposed_comm_ms,
                format_bytes(MemoryTracker::process().total(memory_space()).peak), format_duration(eta));
}

void Trainer::trace_steps(trace::StepRange steps) {
  if (steps.first > config_.train.steps)
    log::warn("--trace {}: the run ends at step {}, so nothing will be traced", steps.str(), config_.train.steps);
  std::filesystem::path file =
      std::filesystem::path(config_.logging.run_dir) / "trace" / fmt::format("rank{}.json", comm_->rank());
  trace_ = std::make_unique<trace::TraceSession>(steps, std::move(file), comm_->rank());
}

TrainSummary Trainer::run() {
  TrainSummary summary;
  if (first_step_ > config_.train.steps) {
    // A finished run started again (by hand, or by a restart loop): its goal is met, exit 0.
    log::progress("nothing to train: the run resumed after step {} and train.steps is {}; raise train.steps "
                  "(e.g. --set train.steps={}) to train further",
                  first_step_ - 1, config_.train.steps, first_step_ - 1 + config_.train.steps);
    summary.nothing_to_train = true;
    return summary;
  }
  started_ = Clock::now();
  for (std::int64_t s = first_step_; s <= config_.train.steps; ++s) {
    trace::Timeline* timeline = trace_ ? trace_->begin_step(s, ctx_->stream()) : nullptr;
    engine_->set_timeline(timeline);
    const double lr = rate(s);
    StepStats stats = step(s);
    report(s, stats, lr);
    collect_background_save(false);
    if (s == first_step_)
      log::progress("memory after the first step (current, peak): {}{}",
                    MemoryTracker::process().report(memory_space()),
                    ctx_->device().is_cuda() ? fmt::format("; outside zerotrain (CUDA context, NCCL, cuBLAS): {}",
                                                           format_bytes(device_memory_outside()))
                                             : "");
    summary.final_loss = stats.loss;
    ++summary.steps;
    const bool eval_now = val_batches_ && config_.train.eval_interval > 0 &&
                          (s % config_.train.eval_interval == 0 || s == config_.train.steps);
    if (eval_now) {
      const auto eval_start = Clock::now();
      double val = validate();
      if (timeline) timeline->add_host_span(trace::Lane::host, "eval", eval_start, Clock::now(), {{"step", s}});
      summary.final_val_loss = val;
      log::progress("step {} | val loss {:.4f} (mean of {} batches of {} x {} tokens: {} per rank)", s, val,
                    config_.train.eval_steps * comm_->world_size(), micro_batch_, seq_len_, config_.train.eval_steps);
      if (metrics_) metrics_->write({{"step", s}, {"val_loss", val}});
    }
    if (config_.train.sample_interval > 0 && s % config_.train.sample_interval == 0) print_sample(s);
    // Before the periodic save, so that a non-finite state is never saved as a checkpoint.
    if (std::optional<StopRequest> stop = guard_->after_step(s, stats)) stop_early(*stop);
    if (checkpoint_due(s)) {
      const auto save_start = Clock::now();
      save_checkpoint(s);
      if (timeline) timeline->add_host_span(trace::Lane::host, "checkpoint", save_start, Clock::now(), {{"step", s}});
    }
    if (timeline) {
      engine_->set_timeline(nullptr);
      trace_->end_step();
    }
  }
  collect_background_save(true);  // the job never ends with a save half written
  if (trace_) trace_->finish();
  if (metrics_) metrics_->report_losses();
  summary.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  log::progress("memory at the end (current, peak): {}", MemoryTracker::process().report(memory_space()));
  log::progress("done: {} steps in {}, final loss {:.4f}{}, {} tok/s on average", summary.steps,
                format_duration(summary.seconds), summary.final_loss,
                summary.final_val_loss ? fmt::format(", val loss {:.4f}", *summary.final_val_loss) : "",
                format_rate(tokens_per_step_ * static_cast<double>(summary.steps) / summary.seconds));
  return summary;
}

}  // namespace zt
