// The experiment config: typed structs loaded from a YAML file plus `--set key=value` overrides.
//
// Every key, its type, default, allowed values and meaning live in one schema table
// (config_schema.cpp); loading, overrides, validation, printing and the reference docs
// (docs/config.md) are all driven by it. Key names follow DeepSpeed's where DeepSpeed has one.
//
// A Config with the defaults comes from default_config(). The sections that are a component's own
// options (zero_optimization, optimizer, scheduler, comm, precision's loss-scaling keys) have the
// keys' defaults as their initialisers; the others' initialisers only make a plain `Config{}` well
// defined, they are not the defaults.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "core/dtype.h"
#include "core/log.h"
#include "comm/comm_options.h"
#include "models/model_config.h"
#include "optim/adamw.h"
#include "optim/loss_scaler.h"
#include "optim/lr_schedule.h"
#include "zero/engine_options.h"

namespace zt {

using models::ModelConfig;
using models::ModelPreset;
using models::ModelType;

struct DataConfig {
  std::string train_files;  // glob of token shard files
  std::string val_files;    // glob; empty = no validation data
  std::int64_t seq_len = 0;  // 0 = model.block_size; see effective_seq_len()
  bool operator==(const DataConfig&) const = default;
};

// What a step with an inf/NaN loss or gradients does to the job (train.on_nonfinite).
enum class NonFinitePolicy { stop, skip };

struct TrainConfig {
  std::string device;  // "auto", "cpu", "cuda" or "cuda:N"
  std::int64_t train_micro_batch_size_per_gpu = 0;
  std::int64_t gradient_accumulation_steps = 0;
  std::int64_t steps = 0;
  std::int64_t seed = 0;
  std::int64_t eval_interval = 0;  // 0 = never
  std::int64_t eval_steps = 0;
  std::int64_t sample_interval = 0;  // 0 = never
  double gradient_clipping = 0;  // max global gradient norm; 0 = off
  NonFinitePolicy on_nonfinite = NonFinitePolicy::stop;
  std::int64_t max_consecutive_nonfinite = 0;  // skip: stop after this many non-finite steps in a row
  std::int64_t cpu_threads = 0;  // CPU compute threads per rank; 0 = this rank's share of the cores
  double cpu_peak_gflops = 0;    // sgemm rate per rank for MFU; 0 = measured at start-up
  bool cpu_reference_kernels = false;  // the simple reference CPU kernels instead of the fast ones
  bool cudnn_attention = true;         // GPU attention on cuDNN where it loads, else the flash kernels
  std::int64_t activation_checkpointing = 0;  // recompute every k-th block's forward; 0 = off
  bool operator==(const TrainConfig&) const = default;
};

enum class OptimizerType { adamw };

// The optimizer section: its type, and AdamW's own options (optim/adamw.h).
struct OptimizerConfig : AdamWOptions {
  OptimizerType type = OptimizerType::adamw;
  bool operator==(const OptimizerConfig&) const = default;
};

// The scheduler section is the schedule's own options (optim/lr_schedule.h).
using SchedulerConfig = LrScheduleOptions;
using SchedulerType = LrScheduleOptions::Kind;

// The precision section: the compute dtype, TF32, and the loss scaler's own options (fp16 only).
struct PrecisionConfig : LossScalerOptions {
  DType dtype = DType::f32;  // compute dtype of parameters, activations and gradients
  bool tf32 = true;  // fp32 GPU matrix products on TF32 tensor cores
  bool operator==(const PrecisionConfig&) const = default;
};

struct CheckpointConfig {
  std::string dir;  // empty = <logging.run_dir>/checkpoints
  std::int64_t interval = 0;  // steps; 0 = off
  std::int64_t keep_last = 0;  // 0 = keep all
  std::string resume;  // "none", "auto" or a checkpoint path
  bool async_save = false;  // write the files in the background; the step waits for the host copy only
  bool operator==(const CheckpointConfig&) const = default;
};

// What a failed write of metrics.jsonl (a full disk) does to the job (logging.on_write_error).
enum class WriteErrorPolicy { warn, fail };

struct LoggingConfig {
  log::Level level = log::Level::info;
  std::int64_t log_interval = 0;
  std::string run_dir;
  bool all_ranks = false;
  WriteErrorPolicy on_write_error = WriteErrorPolicy::warn;
  bool operator==(const LoggingConfig&) const = default;
};

// The comm section is the communicator's own settings (comm/comm_options.h).
using CommConfig = CommSettings;

// An emulated accelerator for benchmarks (models::ComputeContext::emulated): off while tflops is 0.
struct EmulationConfig {
  double tflops = 0;          // dense peak of the emulated device, TFLOP/s
  double mfu = 0.4;           // the share of the peak its blocks sustain
  double memory_gbps = 3350;  // its memory bandwidth, GB/s (0: not modelled)
  bool enabled() const { return tflops > 0; }
  bool operator==(const EmulationConfig&) const = default;
};

struct Config {
  ModelConfig model;
  DataConfig data;
  TrainConfig train;
  OptimizerConfig optimizer;
  SchedulerConfig scheduler;
  PrecisionConfig precision;
  ZeroConfig zero_optimization;
  CheckpointConfig checkpoint;
  LoggingConfig logging;
  CommConfig comm;
  EmulationConfig emulation;
  bool operator==(const Config&) const = default;
};

// All defaults (with model.preset's shape filled in).
Config default_config();

// Loads `file` and then applies `overrides` ("section.key=value", YAML scalars or flow lists) in
// order. An empty file means all defaults. Any mistake throws zt::UserError naming the file,
// line and column (or the --set argument), the key, what was expected and what was found.
Config load_config(const std::filesystem::path& file, std::span<const std::string> overrides = {});

// Like load_config, for YAML text already in memory; `source_name` stands for the file in messages.
Config parse_config(std::string_view yaml_text, std::string_view source_name,
                    std::span<const std::string> overrides = {});

// One of several YAML texts a config is built from: later layers win, key by key; a key a layer
// leaves out keeps the value below it. `source_name` stands for the layer in messages.
struct ConfigLayer {
  std::string yaml_text;
  std::string source_name;
};
Config parse_config_layers(std::span<const ConfigLayer> layers, std::span<const std::string> overrides = {});
// A YAML config file as a layer, read with load_config's checks (a regular file, text).
ConfigLayer read_config_layer(const std::filesystem::path& file);

// The fully resolved config as YAML, every key in schema order; parse_config of it gives `config`.
std::string config_to_yaml(const Config& config);

// The Markdown reference of every key (committed as docs/config.md).
std::string config_reference_markdown();

// data.seq_len with 0 resolved to model.block_size.
std::int64_t effective_seq_len(const Config& config);

// The YAML spelling of a choice, e.g. "warmup_cosine", for log lines.
std::string_view choice_name(ModelType value);
std::string_view choice_name(ModelPreset value);
std::string_view choice_name(SchedulerType value);
std::string_view choice_name(CommDataType value);
std::string_view choice_name(CommBackend value);

}  // namespace zt
