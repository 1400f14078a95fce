#include "runtime/config/config_schema.h"

#include <fmt/format.h>

#include <charconv>
#include <concepts>
#include <iterator>
#include <type_traits>
#include <stdexcept>

#include "comm/comm_options.h"
#include "models/family.h"
#include "zero/engine_options.h"

namespace zt {
namespace {

// ---- Binding a key to its member of Config ----

template <typename T>
struct FieldAccess {
  std::function<T&(Config&)> ref;
  std::function<const T&(const Config&)> cref;
};

// member may belong to a base of the section's struct: the options struct of the component that
// owns the keys (ZeroConfig, LossScalerOptions), so that each key is one field.
template <typename Section, typename Owner, typename T>
  requires std::is_base_of_v<Owner, Section>
FieldAccess<T> field(Section Config::*section, T Owner::*member) {
  return {[=](Config& config) -> T& { return static_cast<Owner&>(config.*section).*member; },
          [=](const Config& config) -> const T& { return static_cast<const Owner&>(config.*section).*member; }};
}

// ---- Ranges ----

NumberRange at_least(double min) { return {.min = min}; }
NumberRange greater_than(double min) { return {.min = min, .min_exclusive = true}; }
NumberRange between(double min, double max) { return {.min = min, .max = max}; }
NumberRange half_open(double min, double max) { return {.min = min, .max = max, .max_exclusive = true}; }

// Upper bounds of integer keys: each is what the code behind the key can honour. Sizes handed to
// kernels and to MPI are `int`; step counters are int64 and get headroom for `step + 1` and for
// exact use as doubles in the LR schedule (2^53).
constexpr double kMaxIntKey = 2147483647.0;         // INT_MAX: the key ends up in an `int`
constexpr double kMaxSteps = 1e12;                  // steps, intervals and windows counted in steps
constexpr double kMaxBucketElements = 1099511627776.0;  // 2^40 elements: bytes stay far below 2^63

// ---- Key builders, one per value type ----

// The field may be any integer type the owner uses (int, std::size_t, ...): the key's range keeps
// every value representable in it.
template <std::integral T>
ConfigKey integer(std::string path, FieldAccess<T> f, std::int64_t default_value, NumberRange range, std::string doc) {
  ConfigKey key{.path = std::move(path), .type = ValueType::integer, .default_value = default_value,
                .range = range, .doc = std::move(doc)};
  key.store = [f](Config& config, const ConfigValue& value) {
    f.ref(config) = static_cast<T>(std::get<std::int64_t>(value));
  };
  key.read = [f](const Config& config) -> ConfigValue { return static_cast<std::int64_t>(f.cref(config)); };
  return key;
}

// An integer key that also takes the word `auto`, stored as auto_value.
template <std::integral T>
ConfigKey integer_or_auto(std::string path, FieldAccess<T> f, std::int64_t default_value, NumberRange range,
                          std::int64_t auto_value, std::string doc) {
  ConfigKey key = integer(std::move(path), f, default_value, range, std::move(doc));
  key.auto_value = auto_value;
  return key;
}

ConfigKey number(std::string path, FieldAccess<double> f, double default_value, NumberRange range, std::string doc) {
  ConfigKey key{.path = std::move(path), .type = ValueType::number, .default_value = default_value,
                .range = range, .doc = std::move(doc)};
  key.store = [f](Config& config, const ConfigValue& value) { f.ref(config) = std::get<double>(value); };
  key.read = [f](const Config& config) -> ConfigValue { return f.cref(config); };
  return key;
}

ConfigKey boolean(std::string path, FieldAccess<bool> f, bool default_value, std::string doc) {
  ConfigKey key{.path = std::move(path), .type = ValueType::boolean, .default_value = default_value,
                .doc = std::move(doc)};
  key.store = [f](Config& config, const ConfigValue& value) { f.ref(config) = std::get<bool>(value); };
  key.read = [f](const Config& config) -> ConfigValue { return f.cref(config); };
  return key;
}

// A string; `check` (optional) restricts its format, described for users by `allowed`.
ConfigKey text(std::string path, FieldAccess<std::string> f, std::string default_value, std::string doc,
               std::string allowed = "", std::function<std::optional<std::string>(std::string_view)> check = {}) {
  ConfigKey key{.path = std::move(path), .type = ValueType::string, .default_value = std::move(default_value),
                .check_text = std::move(check), .allowed_text = std::move(allowed), .doc = std::move(doc)};
  key.store = [f](Config& config, const ConfigValue& value) { f.ref(config) = std::get<std::string>(value); };
  key.read = [f](const Config& config) -> ConfigValue { return f.cref(config); };
  return key;
}

// One of a fixed set of names, stored as the enum value paired with the name.
template <typename E>
ConfigKey choice(std::string path, FieldAccess<E> f, E default_value,
                 std::vector<std::pair<std::string, E>> names, std::string doc) {
  ConfigKey key{.path = std::move(path), .type = ValueType::choice, .doc = std::move(doc)};
  for (const auto& [name, value] : names) {
    key.choices.push_back(name);
    key.choice_values.push_back(static_cast<int>(value));
    if (value == default_value) key.default_value = name;
  }
  key.store = [f, names](Config& config, const ConfigValue& value) {
    for (const auto& [name, enum_value] : names)
      if (name == std::get<std::string>(value)) f.ref(config) = enum_value;
  };
  key.read = [f, names](const Config& config) -> ConfigValue {
    for (const auto& [name, enum_value] : names)
      if (enum_value == f.cref(config)) return name;
    throw std::logic_error("config: enum value without a name");
  };
  return key;
}

template <std::size_t N>
ConfigKey number_list(std::string path, FieldAccess<std::array<double, N>> f, std::array<double, N> default_value,
                      NumberRange each, std::string doc) {
  ConfigKey key{.path = std::move(path), .type = ValueType::number_list,
                .default_value = std::vector<double>(default_value.begin(), default_value.end()),
                .range = each, .list_length = N, .doc = std::move(doc)};
  key.store = [f](Config& config, const ConfigValue& value) {
    const auto& list = std::get<std::vector<double>>(value);
    std::copy(list.begin(), list.end(), f.ref(config).begin());
  };
  key.read = [f](const Config& config) -> ConfigValue {
    return std::vector<double>(f.cref(config).begin(), f.cref(config).end());
  };
  return key;
}

// ---- Formats of string keys ----

std::optional<std::string> check_device(std::string_view text) {
  if (text == "auto" || text == "cpu" || text == "cuda") return std::nullopt;
  if (text.starts_with("cuda:")) {
    std::string_view index = text.substr(5);
    int value = 0;
    auto [end, error] = std::from_chars(index.data(), index.data() + index.size(), value);
    if (!index.empty() && error == std::errc() && end == index.data() + index.size() && value >= 0)
      return std::nullopt;
    return "the N of cuda:N must be a GPU index (0, 1, ...)";
  }
  return std::string("not a device");
}

std::optional<std::string> check_not_empty(std::string_view text) {
  if (text.empty()) return std::string("must not be empty");
  return std::nullopt;
}

// ---- The table ----

std::vector<ConfigSection> make_sections() {
  return {
      {"model", "The network: a GPT-2 or Llama style transformer or a plain MLP, and its shape."},
      {"data", "Token shard files (llm.c format: 256 x int32 header, then uint16 tokens, or uint32 for Llama 3 "
       "shards) and the sequence length."},
      {"train", "The training loop: device, batch sizes, step counts, evaluation and gradient clipping."},
      {"optimizer", "AdamW hyper-parameters and which parameters get weight decay."},
      {"scheduler", "The learning-rate schedule over `train.steps`."},
      {"precision", "Compute dtype, and loss scaling for fp16 (DeepSpeed's `fp16` keys)."},
      {"zero_optimization",
       "ZeRO sharding stage, gradient buckets and overlap of communication with backward (DeepSpeed's keys)."},
      {"checkpoint", "Saving and resuming the training state."},
      {"logging", "Log verbosity, progress lines and the directory of the run's outputs."},
      {"comm", "The collective-communication backend and its safety nets."},
      {"emulation",
       "An emulated accelerator, a measuring instrument for benchmarks and not a way to train: the engine, its "
       "buffers and every collective are real, but a block's forward and backward do no arithmetic and wait "
       "the time the device would take (FLOPs at `tflops` x `mfu`, bytes at `memory_gbps`), so overlap and "
       "scaling can be measured at an accelerator's ratio of compute to communication on CPUs."},
  };
}

std::vector<ConfigKey> make_keys() {
  std::vector<ConfigKey> keys;
  auto add = [&keys](ConfigKey key) { keys.push_back(std::move(key)); };

  // model
  std::vector<std::pair<std::string, ModelType>> family_names;
  for (const models::ModelFamily* family : models::model_families())
    family_names.emplace_back(family->name(), family->type());
  add(choice("model.type", field(&Config::model, &ModelConfig::type), ModelConfig{}.type, family_names,
             "`gpt2`: GPT-2 style decoder-only transformer; `llama`: Llama style decoder (RMSNorm, rotary "
             "positions, grouped-query attention, SwiGLU; also SmolLM, and Qwen3 with `qk_norm`); `mlp`: "
             "`mlp_layers` dense layers of width `mlp_hidden` (a small model for testing the runtime)."));
  std::vector<std::pair<std::string, ModelPreset>> preset_names{{"none", ModelPreset::none}};
  for (const models::ModelFamily* family : models::model_families())
    for (const models::FamilyPreset& preset : family->presets()) preset_names.emplace_back(preset.name, preset.preset);
  add(choice("model.preset", field(&Config::model, &ModelConfig::preset), ModelPreset::tiny, preset_names,
             "Named shape that sets the model's keys (type, n_layer, n_head, n_embd, ...), except those given "
             "explicitly (see Model presets); `none`: the defaults below."));
  add(integer("model.n_layer", field(&Config::model, &ModelConfig::n_layer), 2, between(1, 1024),
              "Number of transformer blocks."));
  add(integer("model.n_head", field(&Config::model, &ModelConfig::n_head), 4, between(1, 1024),
              "Attention heads per block; must divide n_embd."));
  add(integer("model.n_embd", field(&Config::model, &ModelConfig::n_embd), 64, between(1, 65536),
              "Width of the residual stream (embedding size)."));
  add(integer("model.vocab_size", field(&Config::model, &ModelConfig::vocab_size), 256, between(1, 1 << 24),
              "Number of token ids; above 65536 the data must be llm.c Llama 3 shards (uint32 tokens)."));
  add(integer("model.block_size", field(&Config::model, &ModelConfig::block_size), 64, between(1, 1 << 20),
              "Longest sequence the model takes (gpt2: number of learned positions; llama: "
              "max_position_embeddings)."));
  add(integer("model.n_kv_head", field(&Config::model, &ModelConfig::n_kv_head), 0, between(0, 1024),
              "`llama`: key/value heads of grouped-query attention; must divide n_head; 0 = n_head (multi-head), "
              "1 = multi-query."));
  add(integer("model.intermediate_size", field(&Config::model, &ModelConfig::intermediate_size), 0,
              between(0, 1 << 20), "`llama`: width of the SwiGLU MLP (gate_proj/up_proj outputs); 0 = 4 * n_embd."));
  add(number("model.rope_theta", field(&Config::model, &ModelConfig::rope_theta), 10000.0, greater_than(0),
             "`llama`: base of the rotary position frequencies."));
  add(number("model.rope_scaling_factor", field(&Config::model, &ModelConfig::rope_scaling_factor), 0.0,
             at_least(0),
             "`llama`: Llama 3's RoPE frequency scaling (transformers' rope_type `llama3`) by this factor; "
             "0 = none."));
  add(number("model.rope_low_freq_factor", field(&Config::model, &ModelConfig::rope_low_freq_factor), 1.0,
             greater_than(0), "`llama`, with rope_scaling_factor: Llama 3's low_freq_factor."));
  add(number("model.rope_high_freq_factor", field(&Config::model, &ModelConfig::rope_high_freq_factor), 4.0,
             greater_than(0), "`llama`, with rope_scaling_factor: Llama 3's high_freq_factor."));
  add(integer("model.rope_original_max_position",
              field(&Config::model, &ModelConfig::rope_original_max_position), 8192, between(1, 1 << 24),
              "`llama`, with rope_scaling_factor: Llama 3's original_max_position_embeddings."));
  add(number("model.rms_norm_eps", field(&Config::model, &ModelConfig::rms_norm_eps), 1e-5, greater_than(0),
             "`llama`: epsilon of every RMSNorm."));
  add(boolean("model.tie_embeddings", field(&Config::model, &ModelConfig::tie_embeddings), true,
              "`llama`: the output head reuses embed_tokens; false = its own lm_head (gpt2 always ties)."));
  add(boolean("model.qk_norm", field(&Config::model, &ModelConfig::qk_norm), false,
              "`llama`: RMSNorm over each head of the queries and keys before RoPE (Qwen3's q_norm/k_norm)."));
  add(integer("model.mlp_hidden", field(&Config::model, &ModelConfig::mlp_hidden), 256, between(1, 1 << 20),
              "`mlp`: width of each hidden layer."));
  add(integer("model.mlp_layers", field(&Config::model, &ModelConfig::mlp_layers), 2, between(1, 1024),
              "`mlp`: number of hidden layers."));
  add(integer("model.init_seed", field(&Config::model, &ModelConfig::init_seed), 42, at_least(0),
              "Seed of the parameter initialisation (the same on every rank)."));
  add(text("model.init_from", field(&Config::model, &ModelConfig::init_from), "",
           "Start from Hugging Face weights instead of `init_seed`: a `save_pretrained` directory or a "
           "`.safetensors` file (GPT-2). Fresh optimizer state; any ZeRO stage and world size. Shape keys not "
           "given explicitly (and no explicit `preset`) are taken from the checkpoint's config.json. Empty = none."));

  // data
  add(text("data.train_files", field(&Config::data, &DataConfig::train_files), "data/fortunes/train_*.bin",
           "Glob of the training token shards; each rank reads its slice of every batch.", "a non-empty glob",
           check_not_empty));
  add(text("data.val_files", field(&Config::data, &DataConfig::val_files), "data/fortunes/val_*.bin",
           "Glob of the validation token shards; empty = no validation data."));
  add(integer("data.seq_len", field(&Config::data, &DataConfig::seq_len), 0, between(0, 1 << 20),
              "Tokens per training sequence; 0 = `model.block_size`."));

  // train
  add(text("train.device", field(&Config::train, &TrainConfig::device), "auto",
           "`auto`: this rank's GPU when built with CUDA and one is present, else the CPU; `cuda`: the GPU of "
           "this rank's local index; `cuda:N`: GPU N.",
           "auto, cpu, cuda, cuda:N", check_device));
  add(integer("train.cpu_threads", field(&Config::train, &TrainConfig::cpu_threads), 0, between(0, 4096),
              "CPU compute threads per rank (OpenBLAS's; the element-wise kernels run vectorised on the rank's "
              "main thread). 0 = automatic: the CPUs "
              "this rank may run on, divided among the ranks on this host unless the launcher already bound each "
              "rank to its own CPUs, minus one for the comm thread when there are several ranks and at least two "
              "CPUs to share; at least 1."));
  add(number("train.cpu_peak_gflops", field(&Config::train, &TrainConfig::cpu_peak_gflops), 0, at_least(0),
             "CPU runs: the sgemm rate (GFLOP/s per rank) that MFU is measured against. 0 = measured at start-up "
             "(about 0.2 s) on the model's largest matrix-product shape with this rank's threads; "
             "`zerotrain bench-gemm` measures it for other shapes."));
  add(boolean("train.cpu_reference_kernels", field(&Config::train, &TrainConfig::cpu_reference_kernels), false,
              "CPU runs: use the simple reference layer kernels and AdamW loop (the ones the fast kernels are "
              "tested against) instead of the vectorised ones, "
              "for checking results and measuring the difference. Slower."));
  add(boolean("train.cudnn_attention", field(&Config::train, &TrainConfig::cudnn_attention), true,
              "GPU runs in bf16/fp16: attention on cuDNN's fused kernels where cuDNN 9 loads (libcudnn.so.9 on the "
              "loader's path), else on zerotrain's own flash kernels; the log says which. false: the flash "
              "kernels always."));
  add(integer("train.train_micro_batch_size_per_gpu", field(&Config::train, &TrainConfig::train_micro_batch_size_per_gpu),
              4, between(1, 1 << 20), "Sequences per rank in one forward/backward (DeepSpeed's name; also on CPUs)."));
  add(integer("train.gradient_accumulation_steps", field(&Config::train, &TrainConfig::gradient_accumulation_steps),
              1, between(1, 1 << 20), "Micro-batches per optimizer step; gradients are reduced on the last one only."));
  add(integer("train.steps", field(&Config::train, &TrainConfig::steps), 100, between(1, kMaxSteps),
              "Optimizer steps to train for."));
  add(integer("train.seed", field(&Config::train, &TrainConfig::seed), 1234, at_least(0),
              "Seed of the data order and other training randomness."));
  add(integer("train.eval_interval", field(&Config::train, &TrainConfig::eval_interval), 0, between(0, kMaxSteps),
              "Evaluate on `data.val_files` every this many steps; 0 = never."));
  add(integer("train.eval_steps", field(&Config::train, &TrainConfig::eval_steps), 10, between(1, kMaxSteps),
              "Validation batches per evaluation."));
  add(integer("train.sample_interval", field(&Config::train, &TrainConfig::sample_interval), 0, between(0, kMaxSteps),
              "gpt2: every this many steps, print 32 tokens sampled from the current weights (after "
              "end-of-text, temperature 1, top-k 40, seeded by the step) with the data's tokenizer; 0 = never."));
  add(integer("train.activation_checkpointing", field(&Config::train, &TrainConfig::activation_checkpointing), 0,
              between(0, 1024),
              "Activation checkpointing (DeepSpeed's `activation_checkpointing`, Hugging Face's "
              "`gradient_checkpointing`): k > 0 keeps only the output of the first and every k-th transformer "
              "block after it and runs that block's forward again just before its backward; 1 = every block. "
              "Activations shrink (`zerotrain plan` shows how much), a step takes about one more forward of "
              "those blocks, and the losses are bit for bit those of the run without it. 0 = off."));
  add(number("train.gradient_clipping", field(&Config::train, &TrainConfig::gradient_clipping), 1.0, at_least(0),
             "Clip the global L2 norm of the gradients to this; 0 = no clipping."));
  add(choice("train.on_nonfinite", field(&Config::train, &TrainConfig::on_nonfinite), NonFinitePolicy::stop,
             {{"stop", NonFinitePolicy::stop}, {"skip", NonFinitePolicy::skip}},
             "A step whose loss or gradients are inf/NaN (non-finite gradients are never applied): `stop` ends the job "
             "there (exit status 4) naming the step and the last good checkpoint; `skip` warns and goes on."));
  add(integer("train.max_consecutive_nonfinite", field(&Config::train, &TrainConfig::max_consecutive_nonfinite), 10,
              between(1, kMaxSteps), "`on_nonfinite: skip`: the job stops after this many non-finite steps in a row."));

  // optimizer: AdamW's keys are fields of its own options (AdamWOptions); the struct's initialisers
  // are the defaults.
  const OptimizerConfig optimizer;
  add(choice("optimizer.type", field(&Config::optimizer, &OptimizerConfig::type), optimizer.type,
             {{"adamw", OptimizerType::adamw}}, "`adamw`: Adam with decoupled weight decay."));
  add(number("optimizer.lr", field(&Config::optimizer, &OptimizerConfig::lr), optimizer.lr, between(0, 1),
             "Peak learning rate (reached at the end of warmup)."));
  add(number_list("optimizer.betas", field(&Config::optimizer, &OptimizerConfig::betas), optimizer.betas,
                  half_open(0, 1), "Decay rates of the running averages of the gradient and of its square."));
  add(number("optimizer.eps", field(&Config::optimizer, &OptimizerConfig::eps), optimizer.eps, greater_than(0),
             "Added to the denominator of the update for numerical stability."));
  add(number("optimizer.weight_decay", field(&Config::optimizer, &OptimizerConfig::weight_decay),
             optimizer.weight_decay, at_least(0), "Decoupled weight decay coefficient."));
  add(boolean("optimizer.no_decay_bias_and_norm", field(&Config::optimizer, &OptimizerConfig::no_decay_bias_and_norm),
              optimizer.no_decay_bias_and_norm, "Exempt biases and LayerNorm weights from weight decay."));
  add(boolean("optimizer.no_decay_embeddings", field(&Config::optimizer, &OptimizerConfig::no_decay_embeddings),
              optimizer.no_decay_embeddings, "Exempt token and position embeddings from weight decay."));

  // scheduler
  // scheduler: the keys are fields of the schedule's own options (LrScheduleOptions); the struct's
  // initialisers are the defaults.
  const SchedulerConfig scheduler;
  add(choice("scheduler.type", field(&Config::scheduler, &SchedulerConfig::type), scheduler.type,
             {{"constant", SchedulerType::constant},
              {"warmup_cosine", SchedulerType::warmup_cosine},
              {"warmup_linear", SchedulerType::warmup_linear},
              {"WarmupLR", SchedulerType::deepspeed_warmup},
              {"WarmupDecayLR", SchedulerType::deepspeed_warmup_decay},
              {"WarmupCosineLR", SchedulerType::deepspeed_warmup_cosine}},
             "After the warmup: `constant` keeps `optimizer.lr`; `warmup_cosine` / `warmup_linear` decay it to "
             "`min_lr` at `train.steps` along a cosine / a straight line. `WarmupLR`, `WarmupDecayLR` and "
             "`WarmupCosineLR` are DeepSpeed's schedulers, step for step as DeepSpeed runs them (what a "
             "ds_config.json's `scheduler` becomes): warmup from `warmup_min_lr` over max(2, `warmup_steps`) "
             "steps, the first two steps at its start; then `optimizer.lr` (WarmupLR), a straight line back to "
             "`warmup_min_lr` at `train.steps` (WarmupDecayLR) or a cosine to `min_lr` (WarmupCosineLR); a step "
             "skipped for fp16 overflow does not advance them."));
  add(integer("scheduler.warmup_steps", field(&Config::scheduler, &SchedulerConfig::warmup_steps),
              scheduler.warmup_steps, between(0, kMaxSteps),
              "Steps of warmup from 0 (DeepSpeed's schedulers: from `warmup_min_lr`) to `optimizer.lr`; 0 = none."));
  add(number("scheduler.min_lr", field(&Config::scheduler, &SchedulerConfig::min_lr), scheduler.min_lr, at_least(0),
             "Learning rate at the end of the decay; at most `optimizer.lr`. Unused by `constant`, `WarmupLR` and "
             "`WarmupDecayLR`."));
  add(choice("scheduler.warmup_type", field(&Config::scheduler, &SchedulerConfig::warmup_type), scheduler.warmup_type,
             {{"linear", LrScheduleOptions::Warmup::linear}, {"log", LrScheduleOptions::Warmup::log}},
             "DeepSpeed's schedulers: how warmup rises, along a straight line or a logarithm (DeepSpeed's "
             "default, log(i + 1) / log(warmup) at iteration i)."));
  add(number("scheduler.warmup_min_lr", field(&Config::scheduler, &SchedulerConfig::warmup_min_lr),
             scheduler.warmup_min_lr, at_least(0),
             "DeepSpeed's schedulers: the rate warmup starts from (WarmupCosineLR: `warmup_min_ratio` x "
             "`optimizer.lr`); at most `optimizer.lr`."));

  // precision: the loss scaler's keys are fields of its own options (LossScalerOptions); the
  // struct's initialisers are the defaults.
  const PrecisionConfig precision;
  add(choice("precision.dtype", field(&Config::precision, &PrecisionConfig::dtype), precision.dtype,
             {{"fp32", DType::f32}, {"bf16", DType::bf16}, {"fp16", DType::f16}},
             "Compute dtype of parameters, activations and gradients; with bf16/fp16 the optimizer keeps fp32 "
             "master weights."));
  add(number("precision.loss_scale", field(&Config::precision, &PrecisionConfig::loss_scale), precision.loss_scale,
             at_least(0), "fp16: a fixed loss scale; 0 = dynamic loss scaling."));
  add(integer("precision.initial_scale_power", field(&Config::precision, &PrecisionConfig::initial_scale_power),
              precision.initial_scale_power,
              between(0, 63), "fp16 dynamic scaling: the first scale is 2^initial_scale_power."));
  add(integer("precision.loss_scale_window", field(&Config::precision, &PrecisionConfig::loss_scale_window),
              precision.loss_scale_window,
              between(1, kMaxSteps), "fp16 dynamic scaling: steps without overflow before the scale doubles."));
  add(integer("precision.hysteresis", field(&Config::precision, &PrecisionConfig::hysteresis), precision.hysteresis,
              between(1, kMaxIntKey), "fp16 dynamic scaling: overflowing steps tolerated before the scale is halved."));
  add(boolean("precision.tf32", field(&Config::precision, &PrecisionConfig::tf32), precision.tf32,
              "fp32 on a GPU: matrix products may use TF32 tensor cores (fp32 range and accumulation, 10-bit "
              "mantissa inputs; PyTorch's `set_float32_matmul_precision(\"high\")`), several times faster. `false` "
              "computes in strict fp32. No effect on the CPU or with bf16/fp16."));
  add(number("precision.min_loss_scale", field(&Config::precision, &PrecisionConfig::min_loss_scale),
             precision.min_loss_scale, greater_than(0), "fp16 dynamic scaling: the scale never goes below this."));

  // zero_optimization: the keys are fields of the engine's own options (ZeroConfig,
  // zero/engine_options.h); the struct's initialisers are the defaults.
  const ZeroConfig zero;
  add(integer("zero_optimization.stage", field(&Config::zero_optimization, &ZeroConfig::stage), zero.stage,
              between(0, 3),
              "0: plain data parallelism (all-reduce); 1: shard optimizer states; 2: also gradients; 3: also "
              "parameters."));
  add(boolean("zero_optimization.overlap_comm", field(&Config::zero_optimization, &ZeroConfig::overlap_comm),
              zero.overlap_comm,
              "Reduce gradient buckets on the comm stream during backward; `false` runs the same collectives "
              "after backward, with bitwise identical results."));
  add(integer_or_auto(
      "zero_optimization.reduce_bucket_size", field(&Config::zero_optimization, &ZeroConfig::reduce_bucket_size),
      static_cast<std::int64_t>(zero.reduce_bucket_size), between(1, kMaxBucketElements), kAutoBucketSize,
              "Elements per gradient bucket; a full bucket starts its reduction. A layer that does not fit in "
              "the room a bucket has left starts the next one, and a layer larger than a bucket is cut into "
              "pieces of this size. The default (25 MiB of fp32, PyTorch DDP's size) gives about one GPT-2 layer "
              "per bucket: measured, smaller buckets leave less communication exposed (DeepSpeed's 5e8 puts most "
              "models in a single bucket that cannot overlap anything; bench/README.md). `auto`: chosen after the "
              "first step from a short measurement of the link (latency, bandwidth) and of that step's backward "
              "time, at most the default, printed with the reason (docs/architecture.md)."));
  add(integer("zero_optimization.first_reduce_bucket_size",
              field(&Config::zero_optimization, &ZeroConfig::first_reduce_bucket_size),
              static_cast<std::int64_t>(zero.first_reduce_bucket_size), between(1, kMaxBucketElements),
              "Elements of the first gradient bucket (the last layers, ready first; at most reduce_bucket_size): "
              "small, so that the first reduction starts early in backward. The default is PyTorch DDP's 1 MiB "
              "of fp32."));
  add(integer("zero_optimization.reduce_buffer_size",
              field(&Config::zero_optimization, &ZeroConfig::reduce_buffer_size),
              static_cast<std::int64_t>(zero.reduce_buffer_size), between(0, kMaxBucketElements),
              "Elements the gradient bucket buffers may hold together: backward fills a free buffer while the "
              "others' reductions run, and waits only when none is free. At least two buffers are used; 0 = "
              "room for 4 buckets and at least for the largest layer's buckets plus one (backward hands over a "
              "layer's gradient at once). Counted in `zerotrain plan` (buckets)."));
  add(integer("zero_optimization.stage3_prefetch_bucket_size",
              field(&Config::zero_optimization, &ZeroConfig::stage3_prefetch_bucket_size),
              static_cast<std::int64_t>(zero.stage3_prefetch_bucket_size), between(0, kMaxBucketElements),
              "Stage 3: elements of parameters gathered ahead of their use (at least the next layer); a layer "
              "read again within that reach (the last layers, from forward into backward) stays gathered instead "
              "of being gathered again; 0 = no prefetch. A tied embedding stays gathered from its forward to the "
              "LM head's backward either way. Stages 1-3 where the next lookup's rows go first: the elements of "
              "the forward's next layers that the update takes before the tied embedding. The default is about two "
              "GPT-2 layers: DeepSpeed's 5e7 gathers the whole of a small model and saves no memory "
              "(bench/results/perf_memory.md)."));
  add(integer("zero_optimization.stage3_param_persistence_threshold",
              field(&Config::zero_optimization, &ZeroConfig::stage3_param_persistence_threshold),
              static_cast<std::int64_t>(zero.stage3_param_persistence_threshold), between(0, kMaxBucketElements),
              "Stage 3: parameter tensors with fewer elements stay gathered on every rank."));
  add(integer("zero_optimization.zero_hpz_partition_size",
              field(&Config::zero_optimization, &ZeroConfig::zero_hpz_partition_size),
              zero.zero_hpz_partition_size, between(1, 1 << 20),
              "Stage 3: ZeRO++'s secondary partition (hpZ). Groups of this many consecutive ranks keep a copy "
              "of each gathered layer split among them, from its first gather after an optimizer step, and "
              "gather it again (backward, later micro-batches) within the group. Set it to the ranks per host "
              "(ranks placed host by host, as mpirun --map-by slot and srun do): backward's gathers then stay "
              "inside the host, and stage 3 sends over the network what stage 2 sends. Costs each rank 1/size "
              "of the compute-dtype parameters (counted in `zerotrain plan`, params). Must divide the number of "
              "ranks; 1 = off."));
  add(choice("zero_optimization.communication_data_type",
             field(&Config::zero_optimization, &ZeroConfig::communication_data_type), zero.communication_data_type,
             {{"fp32", CommDataType::fp32},
              {"bf16", CommDataType::bf16},
              {"fp16", CommDataType::fp16},
              {"compute", CommDataType::compute}},
             "Dtype gradients are summed in across ranks. The default fp32 keeps sums exact enough at any rank "
             "count; `compute` (= `precision.dtype`) halves the traffic of bf16/fp16 runs."));

  add(choice("zero_optimization.embedding_gradient",
             field(&Config::zero_optimization, &ZeroConfig::embedding_gradient), zero.embedding_gradient,
             {{"auto", EmbeddingGradient::automatic}, {"rows", EmbeddingGradient::rows}, {"dense", EmbeddingGradient::dense}},
             "How the gradient of an embedding tied to the LM head (GPT-2's wte) is reduced. `dense`: as one "
             "gradient, complete only when the embedding's backward, the last of backward, ends: its whole "
             "reduction follows backward. `rows`: the head's part is reduced while the rest of backward runs, and "
             "the lookup's part is sent as the rows the batch touched (every rank's tokens and output-gradient "
             "rows, all-gathered and added in rank order): after backward, B x T rows per rank are left to send, "
             "not the table. `auto`: rows where they are fewer bytes than the table's reduction. Rows are added by host "
             "code: CPU devices only for now (`auto` is dense on a GPU). The sums are ordered differently, so "
             "losses differ from dense in the last bits; overlap_comm on and off stay bitwise identical."));
  add(choice("zero_optimization.lookup_rows_first",
             field(&Config::zero_optimization, &ZeroConfig::lookup_rows_first), zero.lookup_rows_first,
             {{"auto", LookupRowsFirst::automatic}, {"true", LookupRowsFirst::always}, {"false", LookupRowsFirst::never}},
             "Stages 1-3 with the embedding's gradient as rows: whether the update first gathers only the embedding "
             "rows the next batch's lookup reads, and the rest of the table during the forward, before the LM head "
             "reads it. That pays where the table's gather outlasts the rest of the update (a slow link, many "
             "ranks): the forward starts at once. Where the update is the longer (one rank per host, a slow "
             "device), the whole table gathered during the update is ready before the forward, and the rows would "
             "only add their bytes. `auto`: every rank measures its last update and the table's last gather, and "
             "all gather the whole table where every rank's gather ends within its update, the rows otherwise (the "
             "log says when the choice changes). `true`: the rows always; `false`: never. The values read are the "
             "same either way. CPU devices only, like the rows."));

  // checkpoint
  add(text("checkpoint.dir", field(&Config::checkpoint, &CheckpointConfig::dir), "",
           "Directory of the checkpoints; empty = `<logging.run_dir>/checkpoints`."));
  add(integer("checkpoint.interval", field(&Config::checkpoint, &CheckpointConfig::interval), 0, between(0, kMaxSteps),
              "Save a checkpoint every this many steps; 0 = never."));
  add(integer("checkpoint.keep_last", field(&Config::checkpoint, &CheckpointConfig::keep_last), 3, between(0, 1 << 20),
              "Checkpoints kept on disk, older ones are deleted; 0 = keep all."));
  add(boolean("checkpoint.async_save", field(&Config::checkpoint, &CheckpointConfig::async_save), false,
              "Write checkpoints in the background: a save copies this rank's shard of the state to host memory "
              "(a buffer as large as this rank's optimizer state, kept for the next save) and training goes on "
              "while a thread writes the files with the same protocol (COMPLETE last, fsync, rename). At most "
              "one save is in flight: the next waits for it, and so do the end of the run and a stop signal; a "
              "failed background save ends the job naming the error."));
  add(text("checkpoint.resume", field(&Config::checkpoint, &CheckpointConfig::resume), "none",
           "`none`: start from scratch; `auto`: from the latest checkpoint in `dir` if there is one; a path: "
           "from that checkpoint.",
           "none, auto, a path", check_not_empty));

  // logging
  add(choice("logging.level", field(&Config::logging, &LoggingConfig::level), log::Level::info,
             {{"error", log::Level::error}, {"warn", log::Level::warn}, {"info", log::Level::info},
              {"debug", log::Level::debug}},
             "Least severe messages printed."));
  add(integer("logging.log_interval", field(&Config::logging, &LoggingConfig::log_interval), 10, between(1, kMaxSteps),
              "Print a progress line every this many steps."));
  add(text("logging.run_dir", field(&Config::logging, &LoggingConfig::run_dir), "runs/default",
           "Directory of this run's outputs (metrics, traces, checkpoints).", "a non-empty path", check_not_empty));
  add(boolean("logging.all_ranks", field(&Config::logging, &LoggingConfig::all_ranks), false,
              "Print progress lines on every rank, not only on rank 0."));
  add(choice("logging.on_write_error", field(&Config::logging, &LoggingConfig::on_write_error), WriteErrorPolicy::warn,
             {{"warn", WriteErrorPolicy::warn}, {"fail", WriteErrorPolicy::fail}},
             "A record of `metrics.jsonl` that cannot be written (a full disk): `warn` warns once, removes the partial "
             "line and goes on training, and at the end names how many records were lost; `fail` ends the job "
             "(exit status 1) naming the file and the error."));

  // comm: the keys are fields of the communicator's own settings (CommSettings); the struct's
  // initialisers are the defaults.
  const CommConfig comm;
  add(choice("comm.backend", field(&Config::comm, &CommConfig::backend), comm.backend,
             {{"auto", CommBackend::auto_select}, {"mpi", CommBackend::mpi}, {"nccl", CommBackend::nccl}},
             "`mpi`: CPU buffers (GPU buffers staged through the host); `nccl`: GPU buffers; `auto`: nccl on "
             "CUDA devices, else mpi."));
  add(number("comm.timeout_s", field(&Config::comm, &CommConfig::timeout_s), comm.timeout_s, between(0.001, 1e9),
             "Seconds a collective may take before the watchdog fails the job instead of hanging."));
  add(boolean("comm.debug_check", field(&Config::comm, &CommConfig::debug_check), comm.debug_check,
              "Before every collective, check that all ranks issue the same one on the same sizes (slow)."));
  add(integer("comm.poll_interval_us", field(&Config::comm, &CommConfig::poll_interval_us), comm.poll_interval_us,
              between(0, 1e6),
              "MPI backend: microseconds the comm thread sleeps between two tests of a running collective, so that "
              "it leaves the CPU to the compute thread; 0 tests back to back (spins, as a blocking MPI call does). "
              "While the compute thread itself waits for a collective, the comm thread does not sleep (it yields "
              "between tests). Longer sleeps slow transfers, which MPI progresses only while it is called. The comm "
              "thread's CPU "
              "time per step is `comm_cpu_ms` in `metrics.jsonl`."));
  add(boolean("comm.two_level_all_gather", field(&Config::comm, &CommConfig::two_level_all_gather),
              comm.two_level_all_gather,
              "When every host holds the same number of ranks (more than one, on more than one host), placed host "
              "by host: the parameters' and the lookup rows' all-gathers first exchange between hosts the chunks of "
              "the ranks with the same place on their host, then within each host, so that each host's link "
              "carries (hosts - 1) / "
              "hosts of the gathered bytes instead of a flat ring's (ranks - 1) / ranks. Copies only: the results "
              "are the same either way. `false`: one flat ring."));

  // emulation
  add(number("emulation.tflops", field(&Config::emulation, &EmulationConfig::tflops), 0.0, between(0, 1e6),
             "The emulated device's dense peak in TFLOP/s (989 is an H100 SXM's bf16); 0 = no emulation, the "
             "device computes. Needs `train.device: cpu`."));
  add(number("emulation.mfu", field(&Config::emulation, &EmulationConfig::mfu), 0.4, greater_than(0),
             "The share of `emulation.tflops` the emulated blocks sustain (at most 1)."));
  add(number("emulation.memory_gbps", field(&Config::emulation, &EmulationConfig::memory_gbps), 3350.0,
             between(0, 1e9),
             "The emulated device's memory bandwidth in GB/s (a block takes at least its bytes over this); 0 leaves "
             "memory out."));
  return keys;
}

// The families' presets (models/family.h), in registry order.
std::vector<ModelPresetShape> make_presets() {
  std::vector<ModelPresetShape> presets;
  for (const models::ModelFamily* family : models::model_families()) {
    for (const models::FamilyPreset& preset : family->presets()) {
      ModelPresetShape shape{preset.name, preset.description, {}};
      for (const auto& [path, value] : preset.values)
        shape.values.emplace_back(path, std::visit([](const auto& v) { return ConfigValue(v); }, value));
      presets.push_back(std::move(shape));
    }
  }
  return presets;
}

// Each family's checks of its model keys, run when model.type is that family.
std::vector<ConsistencyRule> family_rules() {
  std::vector<ConsistencyRule> rules;
  for (const models::ModelFamily* family : models::model_families())
    for (models::ModelRule& rule : family->rules())
      rules.push_back({fmt::format("{}: {}", family->name(), rule.description), std::move(rule.keys),
                       [type = family->type(), check = std::move(rule.check)](const Config& c) {
                         return c.model.type == type ? check(c.model) : std::nullopt;
                       }});
  return rules;
}

std::vector<ConsistencyRule> make_rules() {
  std::vector<ConsistencyRule> rules = family_rules();
  std::vector<ConsistencyRule> across_sections{
      {"A preset that names a `model.type` (the Llama presets `llama-tiny`, `smollm-135m`, `llama-3.2-1b`) needs "
       "that type.",
       {"model.type", "model.preset"},
       [](const Config& c) -> std::optional<std::string> {
         const std::string_view preset = choice_name(c.model.preset);
         for (const ModelPresetShape& shape : model_presets()) {
           if (shape.name != preset) continue;
           for (const auto& [path, value] : shape.values) {
             if (path != "model.type" || std::get<std::string>(value) == choice_name(c.model.type)) continue;
             return fmt::format("model.preset = {} is a {} shape but model.type = {} (leave type out or set {})",
                                preset, std::get<std::string>(value), choice_name(c.model.type),
                                std::get<std::string>(value));
           }
         }
         return std::nullopt;
       }},
      {"`data.seq_len` is at most `model.block_size`.",
       {"data.seq_len", "model.block_size", "model.preset"},
       [](const Config& c) -> std::optional<std::string> {
         if (c.data.seq_len <= c.model.block_size) return std::nullopt;
         return fmt::format("data.seq_len = {} exceeds model.block_size = {} (the model has no positions beyond "
                            "block_size)",
                            c.data.seq_len, c.model.block_size);
       }},
      {"`train.train_micro_batch_size_per_gpu` x `data.seq_len` (the rows of one micro-batch) is at most what "
       "the model family's kernels index (gpt2: 2147483647, as they index rows with `int`).",
       {"train.train_micro_batch_size_per_gpu", "data.seq_len", "model.block_size", "model.preset"},
       [](const Config& c) -> std::optional<std::string> {
         const std::int64_t seq_len = c.data.seq_len == 0 ? c.model.block_size : c.data.seq_len;
         const std::int64_t most = models::model_family(c.model.type).max_rows_per_micro_batch();
         // Divided rather than multiplied: the product of two large keys may not fit in int64.
         if (seq_len <= 0 || c.train.train_micro_batch_size_per_gpu <= most / seq_len) return std::nullopt;
         return fmt::format("train.train_micro_batch_size_per_gpu = {} x sequence length {} = {} rows per micro-batch; "
                            "at most {} are supported",
                            c.train.train_micro_batch_size_per_gpu, seq_len,
                            c.train.train_micro_batch_size_per_gpu * seq_len, most);
       }},
      {"`scheduler.warmup_type` and `scheduler.warmup_min_lr` shape the warmup of DeepSpeed's schedulers "
       "(`WarmupLR`, `WarmupDecayLR`, `WarmupCosineLR`); `warmup_min_lr` is at most `optimizer.lr`.",
       {"scheduler.warmup_type", "scheduler.warmup_min_lr", "scheduler.type", "optimizer.lr"},
       [](const Config& c) -> std::optional<std::string> {
         const SchedulerType type = c.scheduler.type;
         if (!c.scheduler.is_deepspeeds() &&
             (c.scheduler.warmup_type != LrScheduleOptions::Warmup::linear || c.scheduler.warmup_min_lr != 0))
           return fmt::format("scheduler.warmup_type and scheduler.warmup_min_lr shape DeepSpeed's schedulers "
                              "(WarmupLR, WarmupDecayLR, WarmupCosineLR), not scheduler.type {}",
                              choice_name(type));
         if (c.scheduler.warmup_min_lr <= c.optimizer.lr) return std::nullopt;
         return fmt::format("scheduler.warmup_min_lr = {} is larger than optimizer.lr = {}", c.scheduler.warmup_min_lr,
                            c.optimizer.lr);
       }},
      {"`scheduler.min_lr` is at most `optimizer.lr`.",
       {"scheduler.min_lr", "optimizer.lr"},
       [](const Config& c) -> std::optional<std::string> {
         if (c.scheduler.min_lr <= c.optimizer.lr) return std::nullopt;
         return fmt::format("scheduler.min_lr = {} is larger than optimizer.lr = {}", c.scheduler.min_lr,
                            c.optimizer.lr);
       }},
      {"Evaluation (`train.eval_interval` > 0) needs `data.val_files`.",
       {"train.eval_interval", "data.val_files"},
       [](const Config& c) -> std::optional<std::string> {
         if (c.train.eval_interval == 0 || !c.data.val_files.empty()) return std::nullopt;
         return fmt::format("train.eval_interval = {} asks for evaluation but data.val_files is empty",
                            c.train.eval_interval);
       }},
      {"The emulated device (`emulation.tflops` > 0) runs on `train.device: cpu`, with `emulation.mfu` at most 1.",
       {"emulation.tflops", "emulation.mfu", "train.device"},
       [](const Config& c) -> std::optional<std::string> {
         if (!c.emulation.enabled()) return std::nullopt;
         if (c.train.device != "cpu")
           return fmt::format("emulation.tflops = {} emulates a device on the CPU, but train.device = {} (use cpu)",
                              c.emulation.tflops, c.train.device);
         if (c.emulation.mfu > 1.0) return fmt::format("emulation.mfu = {} is above 1", c.emulation.mfu);
         return std::nullopt;
       }},
      {"`comm.backend: nccl` needs a GPU device (`train.device` is not `cpu`).",
       {"comm.backend", "train.device"},
       [](const Config& c) -> std::optional<std::string> {
         if (c.comm.backend != CommBackend::nccl || c.train.device != "cpu") return std::nullopt;
         return std::string("comm.backend = nccl needs GPU buffers but train.device = cpu (use mpi or auto)");
       }},
  };
  rules.insert(rules.end(), std::make_move_iterator(across_sections.begin()),
               std::make_move_iterator(across_sections.end()));
  return rules;
}

}  // namespace

std::span<const ConfigSection> config_sections() {
  static const std::vector<ConfigSection> sections = make_sections();
  return sections;
}

std::span<const ConfigKey> config_keys() {
  static const std::vector<ConfigKey> keys = make_keys();
  return keys;
}

std::span<const ModelPresetShape> model_presets() {
  static const std::vector<ModelPresetShape> presets = make_presets();
  return presets;
}

std::span<const ConsistencyRule> consistency_rules() {
  static const std::vector<ConsistencyRule> rules = make_rules();
  return rules;
}

const ConfigSection* find_config_section(std::string_view name) {
  for (const ConfigSection& section : config_sections())
    if (section.name == name) return &section;
  return nullptr;
}

const ConfigKey* find_config_key(std::string_view path) {
  for (const ConfigKey& key : config_keys())
    if (key.path == path) return &key;
  return nullptr;
}

namespace {

template <typename E>
std::string_view choice_name_of(std::string_view path, E value) {
  const ConfigKey* key = find_config_key(path);
  for (std::size_t i = 0; key != nullptr && i < key->choices.size(); ++i)
    if (key->choice_values[i] == static_cast<int>(value)) return key->choices[i];
  throw std::logic_error(fmt::format("config: no name for a value of '{}'", path));
}

}  // namespace

std::string_view choice_name(ModelType value) { return choice_name_of("model.type", value); }
std::string_view choice_name(ModelPreset value) { return choice_name_of("model.preset", value); }
std::string_view choice_name(SchedulerType value) { return choice_name_of("scheduler.type", value); }
std::string_view choice_name(CommDataType value) { return choice_name_of("zero_optimization.communication_data_type", value); }
std::string_view choice_name(CommBackend value) { return choice_name_of("comm.backend", value); }

}  // namespace zt
