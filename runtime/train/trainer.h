// A training job: the config turned into a communicator, a model, the ZeRO engine and the data,
// then the step loop with its logging, metrics and validation. One Trainer per rank; every rank
// of the job's communicator takes part (an MpiSession must exist).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

#include "comm/communicator.h"
#include "models/model.h"
#include "optim/lr_schedule.h"
#include "runtime/config/config.h"
#include "runtime/data/tokenizer.h"
#include "runtime/train/batch_source.h"
#include "runtime/train/cpu_contention_watch.h"
#include "runtime/train/metrics_log.h"
#include "runtime/train/run_guard.h"
#include "runtime/trace/trace_session.h"
#include "zero/engine.h"

namespace zt {
namespace checkpoint {
class BackgroundCheckpointWriter;
}

struct TrainSummary {
  std::int64_t steps = 0;
  double final_loss = 0.0;
  std::optional<double> final_val_loss;
  double seconds = 0.0;
  bool nothing_to_train = false;  // resumed at or past train.steps
};

class Trainer {
 public:
  // job: the ranks that train together (the CLI passes every rank of the launch).
  Trainer(const Config& config, MPI_Comm job);
  ~Trainer();
  TrainSummary run();
  // Records a timeline of these steps (with any evaluation they end with) into
  // <run_dir>/trace/rank<R>.json on every rank; call before run().
  void trace_steps(trace::StepRange steps);

 private:
  StepStats step(std::int64_t step);
  double rate(std::int64_t step) const;  // the learning rate of `step`
  double validate();
  void report(std::int64_t step, const StepStats& stats, double lr);
  nlohmann::json memory_fields() const;
  // Device memory in use that zerotrain did not allocate (GPU only; cudaMemGetInfo).
  std::int64_t device_memory_outside() const;
  // Model FLOPs per second over the peak of all ranks: the sgemm ceiling (CPU runs; see
  // train.cpu_peak_gflops) or the GPU's dense datasheet rate for the compute dtype (gpu_peak.h).
  double mfu(double step_ms) const;
  // Checkpoints (trainer_checkpoint.cpp): resume per checkpoint.resume or initialise from the
  // seed; save every checkpoint.interval steps and at the last step.
  void restore_or_init();
  bool checkpoint_due(std::int64_t step) const;
  // checkpoint.async_save: the step waits only for the state's copy to host memory (and for the
  // previous save, if still in flight); the files are written in the background.
  void save_checkpoint(std::int64_t step);
  // The background save: reports one that has finished (or, with `wait`, waits for it first).
  // A failed save ends the job here with its error.
  void collect_background_save(bool wait);
  // The newest complete checkpoint this run saved (or resumed from) in checkpoint_root_.
  std::optional<std::filesystem::path> newest_checkpoint_of_this_run() const;
  MemoryTracker::Space memory_space() const;
  // train.sample_interval (trainer_sample.cpp): a short text sample from the current weights.
  void prepare_sampling();
  void print_sample(std::int64_t step);
  // Ends the job after a StopRequest (trainer_stop.cpp): saves a final checkpoint when the request
  // wants one, names the last good one otherwise, then throws JobStopped on every rank.
  [[noreturn]] void stop_early(const StopRequest& stop);

  Config config_;
  std::unique_ptr<RunGuard> guard_;  // before comm_: it checks the ranks agree before any collective
  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<models::Model> model_;
  std::unique_ptr<models::ComputeContext> ctx_;
  std::unique_ptr<ZeroEngine> engine_;
  std::unique_ptr<BatchSource> train_batches_;
  std::unique_ptr<BatchSource> val_batches_;
  std::unique_ptr<MetricsLog> metrics_;  // rank 0 only
  LrSchedule schedule_;
  int micro_batch_ = 0;
  int seq_len_ = 0;
  std::int64_t first_step_ = 1;
  // Test hook ZT_TEST_NAN_LR_AT_STEP (docs/checkpoints.md): the step whose update uses a NaN
  // learning rate, which makes every parameter NaN, so that every later step has a non-finite loss
  // and gradients on any CPU; 0 = none.
  std::int64_t nan_lr_step_ = 0;
  std::filesystem::path checkpoint_root_;  // checkpoint.dir resolved
  std::string run_id_;                     // this run's id (resume_choice.h), in every checkpoint it saves
  std::int64_t next_save_index_ = 1;       // the save order number of the next checkpoint
  std::chrono::steady_clock::time_point started_;
  double tokens_per_step_ = 0.0;
  double flops_per_step_ = 0.0;
  double peak_flops_per_s_ = 0.0;  // all ranks: the sgemm rate (CPU) or the GPU peak (gpu_peak.h); 0 = unknown
  std::unique_ptr<trace::TraceSession> trace_;
  CpuContentionWatch cpu_watch_{process_cpu_affinity()};  // every rank: warns when other work takes its CPU
  std::unique_ptr<data::Tokenizer> sample_tokenizer_;  // rank 0, when samples are printed as text
  // Last, so destroyed first: an unfinished background save ends while the checkpoint.dir lock
  // (guard_) is still held.
  std::unique_ptr<checkpoint::BackgroundCheckpointWriter> background_saves_;
};

}  // namespace zt
