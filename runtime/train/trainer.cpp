#include "runtime/train/trainer.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "comm/make_communicator.h"
#include "models/compute_context.h"
#include "models/gpt2.h"
#include "models/mlp.h"
#include "runtime/core/log.h"
#include "runtime/train/job_settings.h"

namespace zt {
namespace {

using Clock = std::chrono::steady_clock;

std::string format_duration(double seconds) {
  auto s = static_cast<long>(std::lround(seconds));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string format_rate(double tokens_per_s) {
  if (tokens_per_s >= 1e6) return fmt::format("{:.2f}M", tokens_per_s / 1e6);
  if (tokens_per_s >= 1e3) return fmt::format("{:.1f}k", tokens_per_s / 1e3);
  return fmt::format("{:.0f}", tokens_per_s);
}

}  // namespace

Trainer::Trainer(const Config& config) : config_(config), schedule_(lr_schedule(config)) {
  log::set_level(config.logging.level);
  log::set_progress_on_all_ranks(config.logging.all_ranks);
  LaunchInfo launch = query_launch_info(MPI_COMM_WORLD);
  log::set_rank(launch.rank);
  // Ranks that disagree on the config or the data stop here, all of them, before the first collective.
  guard_ = std::make_unique<RunGuard>(config, MPI_COMM_WORLD);
  const Device device = resolve_device(config, launch.local_rank);
  activate(device);

  CommOptions comm_options;
  comm_options.backend = comm_backend(config);
  comm_options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(config.comm.timeout_s * 1000.0));
  comm_options.debug_check = config.comm.debug_check;
  comm_ = make_communicator(comm_options, device);

  model_ = build_model(config.model);
  ctx_ = device.is_cpu() ? models::ComputeContext::cpu(1) : models::ComputeContext::cuda(device.index, config.precision.dtype);
  micro_batch_ = static_cast<int>(config.train.train_micro_batch_size_per_gpu);
  seq_len_ = config.model.type == ModelType::mlp ? 1 : static_cast<int>(effective_seq_len(config));
  engine_ = std::make_unique<ZeroEngine>(*model_, *ctx_, *comm_, zero_options(config), micro_batch_, seq_len_);

  const auto seed = static_cast<std::uint64_t>(config.train.seed);
  if (config.model.type == ModelType::mlp) {
    const auto& mlp = static_cast<const models::MLP&>(*model_).config();
    train_batches_ = std::make_unique<SyntheticBatches>(mlp, micro_batch_, comm_->rank(), comm_->world_size(), seed);
    val_batches_ = std::make_unique<SyntheticBatches>(mlp, micro_batch_, comm_->rank(), comm_->world_size(), ~seed);
  } else {
    data::TokenLoaderOptions options{config.data.train_files, micro_batch_, seq_len_, comm_->rank(),
                                     comm_->world_size(), seed, static_cast<int>(config.model.vocab_size),
                                     data::WindowOrder::shuffled};
    train_batches_ = std::make_unique<TokenBatches>(options);
    if (!config.data.val_files.empty() && config.train.eval_interval > 0) {
      options.shard_pattern = config.data.val_files;
      options.order = data::WindowOrder::sequential;
      val_batches_ = std::make_unique<TokenBatches>(options);
    }
  }

  restore_or_init();
  prepare_sampling();
  // An unwritable checkpoint.dir fails now rather than at the first save (master weights, m and v: 12 B/param).
  guard_->check_checkpoint_dir(checkpoint_root_, model_->param_count() * 3 * sizeof(float));

  const double world = comm_->world_size();
  const double accumulation = static_cast<double>(config.train.gradient_accumulation_steps);
  tokens_per_step_ = static_cast<double>(micro_batch_) * seq_len_ * accumulation * world;
  flops_per_step_ = model_->flops_per_step(micro_batch_, seq_len_) * accumulation * world;

  if (comm_->rank() == 0) {
    std::filesystem::path run_dir(config.logging.run_dir);
    std::filesystem::create_directories(run_dir);
    std::ofstream(run_dir / "config.yaml") << config_to_yaml(config);
    metrics_ = std::make_unique<MetricsLog>(run_dir / "metrics.jsonl");
  }
  log::progress("training {} ({} parameters) on {} rank(s), device {}, ZeRO stage {}, overlap_comm {}, {} tokens/step",
                model_->name(), model_->param_count(), comm_->world_size(), device.str(),
                config.zero_optimization.stage, config.zero_optimization.overlap_comm, tokens_per_step_);
}

Trainer::~Trainer() = default;

StepStats Trainer::step(std::int64_t step) {
  return engine_->train_step([&](models::Activations& acts, int) { train_batches_->next(acts); }, schedule_.at(step),
                             guard_->local_stop_signal());
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
  return fields;
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
                             {"exposed_comm_ms", stats.exposed_comm_ms}};
    record.update(memory_fields());
    metrics_->write(record);
  }
  const std::int64_t total = config_.train.steps;
  const bool log_now = step == first_step_ || step == total || step % config_.logging.log_interval == 0;
  if (!log_now) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
  const double eta = elapsed / static_cast<double>(step - first_step_ + 1) * static_cast<double>(total - step);
  std::string scale = config_.precision.dtype == DType::f16 ? fmt::format(" | scale {:g}", stats.loss_scale) : "";
  log::progress("step {}/{} | loss {:.4f} | lr {:.2e} | grad norm {:.3f}{}{} | {} tok/s | step {:.1f} ms | "
                "comm {:.1f} ms, exposed {:.1f} ms | peak mem {} | ETA {}",
                step, total, stats.loss, lr, stats.grad_norm, scale, stats.skipped ? " | SKIPPED" : "",
                format_rate(tokens_per_s), stats.step_ms, stats.comm_ms, stats.exposed_comm_ms,
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
  started_ = Clock::now();
  for (std::int64_t s = first_step_; s <= config_.train.steps; ++s) {
    trace::Timeline* timeline = trace_ ? trace_->begin_step(s, ctx_->stream()) : nullptr;
    engine_->set_timeline(timeline);
    StepStats stats = step(s);
    report(s, stats, schedule_.at(s));
    if (s == first_step_)
      log::progress("memory after the first step (current, peak): {}",
                    MemoryTracker::process().report(memory_space()));
    summary.final_loss = stats.loss;
    ++summary.steps;
    const bool eval_now = val_batches_ && config_.train.eval_interval > 0 &&
                          (s % config_.train.eval_interval == 0 || s == config_.train.steps);
    if (eval_now) {
      const auto eval_start = Clock::now();
      double val = validate();
      if (timeline) timeline->add_host_span(trace::Lane::host, "eval", eval_start, Clock::now(), {{"step", s}});
      summary.final_val_loss = val;
      log::progress("step {} | val loss {:.4f}", s, val);
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
  if (trace_) trace_->finish();
  summary.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  log::progress("memory at the end (current, peak): {}", MemoryTracker::process().report(memory_space()));
  log::progress("done: {} steps in {}, final loss {:.4f}{}, {} tok/s on average", summary.steps,
                format_duration(summary.seconds), summary.final_loss,
                summary.final_val_loss ? fmt::format(", val loss {:.4f}", *summary.final_val_loss) : "",
                format_rate(tokens_per_step_ * static_cast<double>(summary.steps) / summary.seconds));
  return summary;
}

}  // namespace zt
