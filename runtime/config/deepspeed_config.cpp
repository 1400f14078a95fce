#include "runtime/config/deepspeed_config.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/error.h"
#include "runtime/config/json_input.h"
#include "core/safe_file.h"

namespace zt {
namespace {

using nlohmann::json;

// DeepSpeed key (dotted) -> zerotrain key, same meaning and units.
const std::map<std::string, std::string>& direct_keys() {
  static const std::map<std::string, std::string> table = {
      {"steps_per_print", "logging.log_interval"},
      {"gradient_clipping", "train.gradient_clipping"},
      {"zero_optimization.stage", "zero_optimization.stage"},
      {"zero_optimization.overlap_comm", "zero_optimization.overlap_comm"},
      {"zero_optimization.reduce_bucket_size", "zero_optimization.reduce_bucket_size"},
      {"zero_optimization.stage3_prefetch_bucket_size", "zero_optimization.stage3_prefetch_bucket_size"},
      {"zero_optimization.stage3_param_persistence_threshold", "zero_optimization.stage3_param_persistence_threshold"},
      {"communication_data_type", "zero_optimization.communication_data_type"},
      {"optimizer.params.lr", "optimizer.lr"},
      {"optimizer.params.betas", "optimizer.betas"},
      {"optimizer.params.eps", "optimizer.eps"},
      {"optimizer.params.weight_decay", "optimizer.weight_decay"},
      {"fp16.loss_scale", "precision.loss_scale"},
      {"fp16.initial_scale_power", "precision.initial_scale_power"},
      {"fp16.loss_scale_window", "precision.loss_scale_window"},
      {"fp16.hysteresis", "precision.hysteresis"},
      {"fp16.min_loss_scale", "precision.min_loss_scale"},
  };
  return table;
}

// Keys that change nothing in zerotrain, with why.
const std::map<std::string, std::string>& no_op_keys() {
  static const std::map<std::string, std::string> table = {
      {"zero_optimization.reduce_scatter", "gradients are always reduce-scattered at stages 1-3"},
      {"zero_optimization.allgather_bucket_size",
       "stages 1/2 all-gather each layer's updated parameters into the layer, one collective per layer"},
      {"zero_optimization.contiguous_gradients", "gradients are always packed into contiguous buckets"},
      {"zero_optimization.allgather_partitions", "updated parameters are always all-gathered"},
      {"zero_optimization.round_robin_gradients", "each rank reduces its own contiguous shard"},
      {"zero_optimization.load_from_fp32_weights", "checkpoints always hold fp32 master weights"},
      {"zero_optimization.elastic_checkpoint", "checkpoints load at any world size and ZeRO stage"},
      {"zero_optimization.stage3_gather_16bit_weights_on_model_save",
       "`zerotrain export` writes the consolidated fp32 weights"},
      {"zero_optimization.ignore_unused_parameters", "every parameter is used"},
      {"wall_clock_breakdown", "step, compute and communication times are in <run_dir>/metrics.jsonl"},
      {"memory_breakdown", "memory per category is in <run_dir>/metrics.jsonl"},
      {"zero_allow_untested_optimizer", "zerotrain has its own AdamW"},
      {"fp16.enabled", "read with the rest of fp16"},
      {"fp16.auto_cast", "zerotrain casts inputs to precision.dtype itself"},
      {"fp16.consecutive_hysteresis", "hysteresis restarts after each good step"},
      {"bf16.enabled", "read with the rest of bf16"},
      {"bf16.immediate_grad_update", "gradients are applied at the accumulation boundary"},
      {"optimizer.type", "read with the rest of the optimizer"},
      {"optimizer.params.torch_adam", "zerotrain has its own fused AdamW"},
      {"optimizer.params.adam_w_mode", "zerotrain's AdamW decouples weight decay"},
      {"scheduler.type", "read with the rest of the scheduler"},
      {"scheduler.params.warmup_type", "checked with the scheduler"},
      {"prescale_gradients", "gradients are averaged once, in the reduction"},
      {"gradient_predivide_factor", "gradients are averaged once, in the reduction"},
      {"sparse_gradients", "zerotrain's gradients are dense"},
      {"dump_state", "the config is written to <run_dir>/config.yaml"},
  };
  return table;
}

// Features zerotrain lacks: what to use instead (prefix match on the dotted key).
const std::vector<std::pair<std::string, std::string>>& unsupported_keys() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"zero_optimization.offload_optimizer",
       "optimizer state stays on the device; shard it over more ranks with zero_optimization.stage: 1-3"},
      {"zero_optimization.offload_param", "parameters stay on the device; shard them with zero_optimization.stage: 3"},
      {"zero_optimization.stage3_max_live_parameters",
       "stage 3 releases each block's gathered parameters after use; bound the prefetch with "
       "zero_optimization.stage3_prefetch_bucket_size"},
      {"zero_optimization.stage3_max_reuse_distance",
       "gathered parameters are released after each use; keep small ones resident with "
       "zero_optimization.stage3_param_persistence_threshold"},
      {"zero_optimization.sub_group_size", "the optimizer updates a rank's whole shard in one fused pass; drop the key"},
      {"zero_optimization.zero_hpz_partition_size", "no hierarchical partitioning (ZeRO++); use zero_optimization.stage: 3"},
      {"zero_optimization.zero_quantized_weights", "no quantized communication (ZeRO++); use "
                                                   "zero_optimization.communication_data_type: bf16 to halve traffic"},
      {"zero_optimization.zero_quantized_gradients", "no quantized communication (ZeRO++); use "
                                                     "zero_optimization.communication_data_type: bf16 to halve traffic"},
      {"zero_optimization.mics_shard_size", "no MiCS; use zero_optimization.stage: 3"},
      {"amp", "no NVIDIA Apex AMP; use the bf16 or fp16 section"},
      {"flops_profiler", "`zerotrain plan` reports FLOPs and predicted step times; metrics.jsonl has measured ones"},
      {"tensorboard", "metrics go to <run_dir>/metrics.jsonl; `zerotrain plot` draws them"},
      {"wandb", "metrics go to <run_dir>/metrics.jsonl; `zerotrain plot` draws them"},
      {"csv_monitor", "metrics go to <run_dir>/metrics.jsonl (JSON lines)"},
      {"comms_logger", "`zerotrain train --trace STEPS` records every collective in a timeline"},
      {"pipeline", "no pipeline parallelism; zerotrain is data-parallel"},
      {"elasticity", "no elastic training; a checkpoint resumes at any world size with --resume"},
      {"compression_training", "no compression training"},
      {"data_efficiency", "no curriculum or data routing"},
      {"curriculum_learning", "no curriculum learning"},
      {"sparse_attention", "no sparse attention"},
      {"autotuning", "`zerotrain plan` predicts step times for candidate settings"},
  };
  return table;
}

struct Walker {
  const json& root;
  std::string file;
  DeepSpeedTranslation out;
  std::vector<std::string> problems;
  std::set<std::string> handled;  // dotted keys consumed by special handling

  const json* find(const std::string& dotted) const {
    const json* node = &root;
    std::size_t start = 0;
    while (start <= dotted.size()) {
      const std::size_t dot = dotted.find('.', start);
      const std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (!node->is_object() || !node->contains(part)) return nullptr;
      node = &(*node)[part];
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return node;
  }
  static bool is_auto(const json& value) { return value.is_string() && value.get<std::string>() == "auto"; }
  void set(const std::string& key, const json& value) {
    for (auto& [k, v] : out.settings)
      if (k == key) {
        v = value.dump();
        return;
      }
    out.settings.emplace_back(key, value.dump());
  }
  std::optional<double> number(const std::string& dotted) {
    const json* v = find(dotted);
    if (v == nullptr || is_auto(*v)) return std::nullopt;
    if (!v->is_number()) {
      problems.push_back(fmt::format("'{}' must be a number, found {}", dotted, v->dump()));
      return std::nullopt;
    }
    return v->get<double>();
  }
  // A positive integer up to `max` (2^40 unless said: counts beyond it are mistakes, and products
  // of them must not overflow).
  std::optional<std::int64_t> integer(const std::string& dotted, std::int64_t max = std::int64_t{1} << 40) {
    const json* v = find(dotted);
    if (v == nullptr || is_auto(*v)) return std::nullopt;
    const bool fits = v->is_number_unsigned() ? v->get<std::uint64_t>() <= static_cast<std::uint64_t>(max)
                                              : v->is_number_integer() && v->get<std::int64_t>() <= max;
    if (!fits || v->get<std::int64_t>() < 1) {
      problems.push_back(fmt::format("'{}' must be an integer in 1..{}, found {}", dotted, max, v->dump()));
      return std::nullopt;
    }
    return v->get<std::int64_t>();
  }
  // DeepSpeed reads `enabled` as a pydantic bool: true/false, 1/0 and the strings "true", "1",
  // "yes", "on" (and their opposites) in any case; anything else is a problem, not false.
  bool enabled(const std::string& section) {
    const json* v = find(section + ".enabled");
    if (v == nullptr || is_auto(*v)) return false;
    if (v->is_boolean()) return v->get<bool>();
    if (v->is_number_integer() && (v->get<std::int64_t>() == 0 || v->get<std::int64_t>() == 1))
      return v->get<std::int64_t>() == 1;
    if (v->is_string()) {
      std::string text = v->get<std::string>();
      for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (const char* yes : {"true", "1", "yes", "on", "t", "y"})
        if (text == yes) return true;
      for (const char* no : {"false", "0", "no", "off", "f", "n"})
        if (text == no) return false;
    }
    problems.push_back(fmt::format("'{}.enabled' must be true or false, found {}", section, v->dump()));
    return false;
  }
};

void translate_precision(Walker& w) {
  const bool fp16 = w.enabled("fp16"), bf16 = w.enabled("bf16") || w.enabled("bfloat16");
  if (fp16 && bf16) w.problems.push_back("both fp16.enabled and bf16.enabled are true; choose one");
  if (fp16) w.set("precision.dtype", "fp16");
  if (bf16) w.set("precision.dtype", "bf16");
  if (w.find("bfloat16") != nullptr) w.handled.insert("bfloat16.enabled");
  if (!fp16)  // fp16's loss-scaling keys mean nothing without fp16
    for (const char* key : {"fp16.loss_scale", "fp16.initial_scale_power", "fp16.loss_scale_window", "fp16.hysteresis",
                            "fp16.min_loss_scale"})
      w.handled.insert(key);
}

void translate_optimizer(Walker& w) {
  const json* type = w.find("optimizer.type");
  if (type == nullptr) return;
  const std::string name = type->is_string() ? type->get<std::string>() : type->dump();
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower != "adamw" && lower != "adam" && lower != "fusedadam") {
    w.problems.push_back(fmt::format("optimizer.type '{}' is not available; zerotrain has AdamW (type: AdamW)", name));
    return;
  }
  const json* mode = w.find("optimizer.params.adam_w_mode");
  if (mode != nullptr && mode->is_boolean() && !mode->get<bool>())
    w.problems.push_back("optimizer.params.adam_w_mode false (Adam with L2 regularisation) is not available; "
                         "zerotrain's AdamW decouples weight decay (drop the key)");
  w.set("optimizer.type", "adamw");
}

void translate_scheduler(Walker& w) {
  const json* type = w.find("scheduler.type");
  if (type == nullptr) return;
  const std::string name = type->is_string() ? type->get<std::string>() : type->dump();
  w.handled.insert("scheduler.params");
  auto param = [&](const char* key) { return "scheduler.params." + std::string(key); };
  const json* warmup_type = w.find(param("warmup_type"));
  if (warmup_type != nullptr && warmup_type->is_string() && warmup_type->get<std::string>() != "linear")
    w.problems.push_back(fmt::format("scheduler.params.warmup_type '{}': zerotrain warms up linearly (use \"linear\")",
                                     warmup_type->get<std::string>()));
  std::optional<double> lr = w.number("optimizer.params.lr");
  auto warmup_steps = [&] {
    if (const json* v = w.find(param("warmup_num_steps")); v != nullptr && !Walker::is_auto(*v)) {
      if (!v->is_number_integer() || v->get<std::int64_t>() < 0)
        w.problems.push_back(fmt::format("'{}' must be a non-negative integer, found {}", param("warmup_num_steps"), v->dump()));
      else
        w.set("scheduler.warmup_steps", *v);
    }
  };
  auto total_steps = [&] {
    if (std::optional<std::int64_t> total = w.integer(param("total_num_steps"))) w.set("train.steps", *total);
  };
  auto warmup_from_zero = [&](const char* key) {
    if (std::optional<double> v = w.number(param(key)); v && *v != 0.0)
      w.problems.push_back(fmt::format("scheduler.params.{} = {}: zerotrain's warmup starts near 0 (lr / warmup_steps); "
                                       "set it to 0",
                                       key, *v));
  };
  if (name == "WarmupLR" || name == "WarmupDecayLR") {
    warmup_from_zero("warmup_min_lr");
    if (std::optional<double> max_lr = w.number(param("warmup_max_lr"))) {
      if (lr && *lr != *max_lr)
        w.problems.push_back(fmt::format("scheduler.params.warmup_max_lr {} differs from optimizer.params.lr {}; "
                                         "zerotrain warms up to optimizer.lr",
                                         *max_lr, *lr));
      lr = max_lr;
      w.set("optimizer.lr", *max_lr);
    }
    warmup_steps();
    if (name == "WarmupLR") {
      // Warmup, then constant: a linear "decay" from lr to lr.
      w.set("scheduler.type", "warmup_linear");
      if (lr) w.set("scheduler.min_lr", *lr);
      else w.problems.push_back("WarmupLR needs warmup_max_lr or optimizer.params.lr (the rate after warmup)");
    } else {
      w.set("scheduler.type", "warmup_linear");
      w.set("scheduler.min_lr", 0.0);
      total_steps();
    }
  } else if (name == "WarmupCosineLR") {
    warmup_from_zero("warmup_min_ratio");
    warmup_steps();
    total_steps();
    w.set("scheduler.type", "warmup_cosine");
    if (std::optional<double> ratio = w.number(param("cos_min_ratio"))) {
      if (lr) w.set("scheduler.min_lr", *ratio * *lr);
      else w.problems.push_back("WarmupCosineLR's cos_min_ratio needs optimizer.params.lr to give scheduler.min_lr");
    }
  } else {
    w.problems.push_back(fmt::format("scheduler.type '{}' is not available; zerotrain has WarmupLR, WarmupDecayLR and "
                                     "WarmupCosineLR (scheduler.type: constant, warmup_linear, warmup_cosine)",
                                     name));
  }
  // Every known parameter was read above; anything else is a mistake.
  if (const json* params = w.find("scheduler.params"); params != nullptr && params->is_object())
    for (const auto& [key, value] : params->items())
      if (key != "warmup_min_lr" && key != "warmup_max_lr" && key != "warmup_num_steps" && key != "warmup_type" &&
          key != "total_num_steps" && key != "warmup_min_ratio" && key != "cos_min_ratio" && key != "last_batch_iteration")
        w.problems.push_back(fmt::format("unknown key 'scheduler.params.{}' for {}", key, name));
}

// DeepSpeed's activation_checkpointing section configures the checkpoints a model's own code asks
// for; zerotrain's blocks are its models' code, so a section with any option on asks for it on
// every block (train.activation_checkpointing: 1). A section whose options are all off (the usual
// template) turns nothing on, as in DeepSpeed without a model that checkpoints. Its keys only tune
// how DeepSpeed keeps the checkpoints; what zerotrain does instead is said in a note each.
void translate_activation_checkpointing(Walker& w) {
  const json* section = w.find("activation_checkpointing");
  if (section == nullptr) return;
  w.handled.insert("activation_checkpointing");
  if (!section->is_object()) {
    w.problems.push_back(fmt::format("'activation_checkpointing' must be an object, found {}", section->dump()));
    return;
  }
  static const std::map<std::string, std::string> keys = {
      {"partition_activations", "no model parallelism to partition the kept outputs across: each rank keeps its own"},
      {"cpu_checkpointing", "the kept block outputs stay on the compute device"},
      {"contiguous_memory_optimization", "the kept block outputs already lie in one arena"},
      {"number_checkpoints", "every transformer block keeps its output"},
      {"synchronize_checkpoint_boundary", "the recompute runs on the compute stream in order; nothing to synchronise"},
      {"profile", "`zerotrain train --trace STEPS` shows each recompute as a span"},
  };
  bool any_on = false;
  for (const auto& [key, value] : section->items())
    any_on = any_on || (value.is_boolean() && value.get<bool>()) || (value.is_number() && value.get<double>() > 0);
  if (!any_on) {
    w.out.notes.push_back("activation_checkpointing: every option is off, so it stays off "
                          "(train.activation_checkpointing: 1 turns it on)");
  } else {
    w.set("train.activation_checkpointing", 1);
    w.out.notes.push_back("activation_checkpointing: each block's forward runs again before its backward "
                          "(train.activation_checkpointing: 1)");
  }
  for (const auto& [key, value] : section->items()) {
    const auto known = keys.find(key);
    if (known == keys.end()) {
      w.problems.push_back(fmt::format("unknown DeepSpeed key 'activation_checkpointing.{}'", key));
      continue;
    }
    const bool off = value.is_boolean() && !value.get<bool>();
    if (!off) w.out.notes.push_back(fmt::format("activation_checkpointing.{}: {}", key, known->second));
  }
}

// train_batch_size = micro batch x gradient accumulation x ranks; any one of them may be left out
// (or "auto") and is derived from the others, as DeepSpeed does.
void translate_batch(Walker& w, int world, const std::string& ranks_from) {
  // Within 2^20 each (2^40 the total), so that one of them times the ranks (an int) stays far from
  // overflow; the product of all three is compared in floating point.
  constexpr std::int64_t kMaxBatch = std::int64_t{1} << 20;
  std::optional<std::int64_t> total = w.integer("train_batch_size", kMaxBatch * kMaxBatch);
  std::optional<std::int64_t> micro = w.integer("train_micro_batch_size_per_gpu", kMaxBatch);
  std::optional<std::int64_t> accumulation = w.integer("gradient_accumulation_steps", kMaxBatch);
  const std::string ranks = fmt::format("{} rank{} ({})", world, world == 1 ? "" : "s", ranks_from);
  if (total && micro && accumulation) {
    const double product = static_cast<double>(*micro) * static_cast<double>(*accumulation) * world;
    if (product != static_cast<double>(*total))
      w.problems.push_back(fmt::format("train_batch_size {} != train_micro_batch_size_per_gpu {} x "
                                       "gradient_accumulation_steps {} x {} = {:.0f}",
                                       *total, *micro, *accumulation, ranks, product));
  } else if (total && micro) {
    if (*total % (*micro * world) != 0)
      w.problems.push_back(fmt::format("train_batch_size {} is not a multiple of train_micro_batch_size_per_gpu {} x {}",
                                       *total, *micro, ranks));
    else
      accumulation = *total / (*micro * world);
  } else if (total) {
    const std::int64_t steps = accumulation.value_or(1);
    if (*total % (steps * world) != 0)
      w.problems.push_back(fmt::format("train_batch_size {} is not a multiple of gradient_accumulation_steps {} x {}",
                                       *total, steps, ranks));
    else
      micro = *total / (steps * world);
  }
  if (micro) w.set("train.train_micro_batch_size_per_gpu", *micro);
  if (accumulation) w.set("train.gradient_accumulation_steps", *accumulation);
}

void walk(Walker& w, const json& node, const std::string& prefix) {
  for (const auto& [key, value] : node.items()) {
    const std::string dotted = prefix.empty() ? key : prefix + "." + key;
    if (w.handled.contains(dotted)) continue;
    bool unsupported = false;
    for (const auto& [feature, instead] : unsupported_keys()) {
      if (dotted != feature) continue;
      unsupported = true;
      // An offload to "none", or a monitor or profiler switched off, asks for nothing.
      const bool offload_none = value.is_object() && value.contains("device") && value["device"] == "none";
      const bool disabled = value.is_object() && value.contains("enabled") && value["enabled"] == false;
      if (offload_none || disabled)
        w.out.notes.push_back(fmt::format("{}: {}, nothing to do", dotted, offload_none ? "device none" : "disabled"));
      else
        w.problems.push_back(fmt::format("'{}' is not supported: {}", dotted, instead));
    }
    if (unsupported) continue;
    if (auto direct = direct_keys().find(dotted); direct != direct_keys().end()) {
      if (Walker::is_auto(value))
        w.out.notes.push_back(fmt::format("{}: \"auto\", zerotrain's {} from the rest of the config", dotted,
                                          direct->second));
      else if (dotted == "communication_data_type")
        w.set(direct->second, value.is_string() && value.get<std::string>() == "fp32" ? json("fp32") : value);
      else
        w.set(direct->second, value);
      continue;
    }
    if (auto no_op = no_op_keys().find(dotted); no_op != no_op_keys().end()) {
      if (!dotted.ends_with(".enabled") && !dotted.ends_with(".type") && dotted != "scheduler.params.warmup_type")
        w.out.notes.push_back(fmt::format("{}: accepted, does nothing in zerotrain ({})", dotted, no_op->second));
      continue;
    }
    if (dotted == "train_batch_size" || dotted == "train_micro_batch_size_per_gpu" ||
        dotted == "gradient_accumulation_steps")
      continue;  // translate_batch
    const bool section = dotted == "fp16" || dotted == "bf16" || dotted == "bfloat16" || dotted == "optimizer" ||
                         dotted == "optimizer.params" || dotted == "scheduler" || dotted == "zero_optimization";
    if (section && value.is_object()) {
      walk(w, value, dotted);
      continue;
    }
    if (dotted == "zero_optimization" && value.is_boolean()) {
      // DeepSpeed's legacy form: true was ZeRO stage 1.
      w.set("zero_optimization.stage", value.get<bool>() ? 1 : 0);
      w.out.notes.push_back(fmt::format("zero_optimization: {} is DeepSpeed's legacy form of stage {}",
                                        value.dump(), value.get<bool>() ? 1 : 0));
      continue;
    }
    if (section) {
      w.problems.push_back(fmt::format("'{}' must be a JSON object of its keys, found {}", dotted, value.dump()));
      continue;
    }
    w.problems.push_back(fmt::format("unknown DeepSpeed key '{}'", dotted));
  }
}

}  // namespace

std::string DeepSpeedTranslation::yaml() const {
  std::vector<std::string> sections;
  std::map<std::string, std::string> body;
  for (const auto& [path, value] : settings) {
    const std::string section = path.substr(0, path.find('.'));
    if (!body.contains(section)) sections.push_back(section);
    body[section] += fmt::format("  {}: {}\n", path.substr(path.find('.') + 1), value);
  }
  std::string text;
  for (const std::string& section : sections) text += section + ":\n" + body[section];
  return text;
}

std::vector<std::string> DeepSpeedTranslation::overrides() const {
  std::vector<std::string> list;
  for (const auto& [path, value] : settings) list.push_back(path + "=" + value);
  return list;
}

std::pair<int, std::string> launcher_world_size() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    if (const char* value = std::getenv(variable)) {
      const int n = std::atoi(value);
      if (n > 0) return {n, fmt::format("from {}", variable)};
    }
  }
  return {1, "not started by mpirun or srun"};
}

DeepSpeedTranslation translate_deepspeed_config(const std::filesystem::path& file, int world_size,
                                                const std::string& ranks_from) {
  std::string why;
  const std::optional<std::string> text = read_regular_file(file, why);
  if (!text) throw UserError(fmt::format("cannot read DeepSpeed config '{}': {}", file.string(), why));
  const json root = parse_json_input(*text, file.string());
  if (!root.is_object()) throw UserError(fmt::format("{}: a DeepSpeed config is a JSON object", file.string()));
  Walker w{root, file.string(), {}, {}, {}};
  try {
    translate_precision(w);
    translate_optimizer(w);
    translate_scheduler(w);
    translate_batch(w, world_size, ranks_from);
    translate_activation_checkpointing(w);
    walk(w, root, "");
  } catch (const json::type_error& e) {
    // A value of a type no check above expected (a number where a name goes, say).
    w.problems.push_back(fmt::format("a value has the wrong JSON type ({})", e.what()));
  }
  if (!w.problems.empty()) {
    std::string message = fmt::format("{}: {} problem{} in the DeepSpeed config:", file.string(), w.problems.size(),
                                      w.problems.size() == 1 ? "" : "s");
    for (const std::string& p : w.problems) message += "\n  " + p;
    throw UserError(message);
  }
  return w.out;
}

}  // namespace zt
