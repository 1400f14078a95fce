#include "runtime/config/deepspeed_config.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/error.h"
#include "runtime/config/config_schema.h"
#include "runtime/config/deepspeed_keys.h"
#include "runtime/config/json_input.h"
#include "core/safe_file.h"

namespace zt {
namespace {

using nlohmann::json;

std::string lower(const std::string& text) {
  std::string result;
  for (char c : text) result += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

struct Walker {
  const json& root;
  DeepSpeedTranslation out;
  std::vector<std::string> problems;
  std::set<std::string> handled;  // dotted keys consumed by special handling
  int stage = 0;                  // the ZeRO stage the file asks for

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
  bool auto_at(const std::string& dotted) const {
    const json* v = find(dotted);
    return v != nullptr && is_auto(*v);
  }
  static void put(DeepSpeedTranslation::Settings& settings, const std::string& key, const json& value) {
    for (auto& [k, v] : settings)
      if (k == key) {
        v = value.dump();
        return;
      }
    settings.emplace_back(key, value.dump());
  }
  void set(const std::string& key, const json& value) { put(out.settings, key, value); }
  // DeepSpeed's value of `key` when the file leaves `deepspeed_key` out ("auto" is not leaving it
  // out: the rest of the config decides).
  void default_to(const std::string& deepspeed_key, const std::string& key, const json& value) {
    if (find(deepspeed_key) == nullptr) put(out.deepspeed_defaults, key, value);
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
  // DeepSpeed reads booleans as pydantic does: true/false, 1/0 and the strings "true", "1",
  // "yes", "on" (and their opposites) in any case; anything else is a problem, not false.
  std::optional<bool> boolean(const std::string& dotted) {
    const json* v = find(dotted);
    if (v == nullptr || is_auto(*v)) return std::nullopt;
    if (v->is_boolean()) return v->get<bool>();
    if (v->is_number_integer() && (v->get<std::int64_t>() == 0 || v->get<std::int64_t>() == 1))
      return v->get<std::int64_t>() == 1;
    if (v->is_string()) {
      const std::string text = lower(v->get<std::string>());
      for (const char* yes : {"true", "1", "yes", "on", "t", "y"})
        if (text == yes) return true;
      for (const char* no : {"false", "0", "no", "off", "f", "n"})
        if (text == no) return false;
    }
    problems.push_back(fmt::format("'{}' must be true or false, found {}", dotted, v->dump()));
    return std::nullopt;
  }
  bool enabled(const std::string& section) { return boolean(section + ".enabled").value_or(false); }
};

void translate_precision(Walker& w) {
  const bool fp16 = w.enabled("fp16"), bf16 = w.enabled("bf16") || w.enabled("bfloat16");
  if (fp16 && bf16) w.problems.push_back("both fp16.enabled and bf16.enabled are true; choose one");
  if (fp16) w.set("precision.dtype", "fp16");
  if (bf16) w.set("precision.dtype", "bf16");
  for (const char* section : {"fp16", "bf16"})
    if (w.auto_at(std::string(section) + ".enabled"))
      w.out.notes.push_back(fmt::format("{0}.enabled: \"auto\" (the Hugging Face Trainer's --{0}): precision.dtype "
                                        "comes from the rest of the config",
                                        section));
  const bool said_auto = w.auto_at("fp16.enabled") || w.auto_at("bf16.enabled");
  if (!fp16 && !bf16 && !said_auto) w.out.deepspeed_defaults.emplace_back("precision.dtype", "\"fp32\"");
  for (const char* key : {"fp16.enabled", "bf16.enabled", "bfloat16.enabled"}) w.handled.insert(key);
  if (w.auto_at("fp16.enabled")) return;  // the loss-scaling keys the file gives apply if the run is fp16
  if (!fp16) {  // fp16's loss-scaling keys mean nothing without fp16
    for (const char* key : {"fp16.loss_scale", "fp16.initial_scale_power", "fp16.loss_scale_window", "fp16.hysteresis",
                            "fp16.min_loss_scale"})
      w.handled.insert(key);
    return;
  }
  if (w.boolean("fp16.consecutive_hysteresis") == true)
    w.problems.push_back("fp16.consecutive_hysteresis true is not available: zerotrain's loss scaler refills its "
                         "hysteresis only when the scale grows (DeepSpeed's default, false)");
  // DeepSpeed's loss scaler when the file says nothing: dynamic, from 2^16, x2 every 1000 good steps.
  w.default_to("fp16.loss_scale", "precision.loss_scale", 0.0);
  w.default_to("fp16.initial_scale_power", "precision.initial_scale_power", 16);
  w.default_to("fp16.loss_scale_window", "precision.loss_scale_window", 1000);
  w.default_to("fp16.hysteresis", "precision.hysteresis", 2);
  w.default_to("fp16.min_loss_scale", "precision.min_loss_scale", 1.0);
}

// DeepSpeed's Adam and AdamW (its only Adam names, any case) are both AdamW unless adam_w_mode is
// false, with FusedAdam's defaults, or torch.optim.AdamW's with torch_adam (weight decay 0.01).
void translate_optimizer(Walker& w) {
  const json* type = w.find("optimizer.type");
  if (type == nullptr) {
    if (!w.auto_at("optimizer"))
      w.out.notes.push_back("no optimizer section: DeepSpeed would use the optimizer the training script passes; "
                            "zerotrain uses its AdamW with optimizer.* from the rest of the config");
    return;
  }
  w.handled.insert("optimizer.type");
  const std::string name = type->is_string() ? type->get<std::string>() : type->dump();
  const std::string kind = lower(name);
  if (kind != "adamw" && kind != "adam") {
    const auto other = deepspeed_keys::other_optimizers().find(kind);
    w.problems.push_back(fmt::format("optimizer.type '{}'{} is not available; zerotrain has AdamW (type: AdamW)", name,
                                     other == deepspeed_keys::other_optimizers().end() ? "" : ", " + other->second + ","));
    w.handled.insert("optimizer.params");  // that optimizer's own parameters: nothing more to say
    return;
  }
  if (w.boolean("optimizer.params.adam_w_mode") == false && kind == "adam")
    w.problems.push_back("optimizer.params.adam_w_mode false (Adam with L2 regularisation) is not available; "
                         "zerotrain's AdamW decouples weight decay (drop the key)");
  if (w.boolean("optimizer.params.bias_correction") == false)
    w.problems.push_back("optimizer.params.bias_correction false is not available; zerotrain's AdamW corrects the "
                         "moments' bias (drop the key)");
  if (w.boolean("optimizer.params.amsgrad") == true)
    w.problems.push_back("optimizer.params.amsgrad true is not available; zerotrain's AdamW is Adam's (drop the key)");
  if (w.find("optimizer.params.max_grad_norm") != nullptr) {
    w.problems.push_back("optimizer.params.max_grad_norm: DeepSpeed refuses it too; use the top-level "
                         "gradient_clipping");
    w.handled.insert("optimizer.params.max_grad_norm");
  }
  w.set("optimizer.type", "adamw");
  const bool torch_adam = w.boolean("optimizer.params.torch_adam").value_or(false);
  w.default_to("optimizer.params.lr", "optimizer.lr", 1e-3);
  w.default_to("optimizer.params.betas", "optimizer.betas", json::array({0.9, 0.999}));
  w.default_to("optimizer.params.eps", "optimizer.eps", 1e-8);
  w.default_to("optimizer.params.weight_decay", "optimizer.weight_decay", torch_adam ? 0.01 : 0.0);
}

// DeepSpeed's WarmupLR, WarmupDecayLR and WarmupCosineLR become zerotrain's schedulers of the same
// names (optim/lr_schedule.h), with DeepSpeed's defaults for what the file leaves out; no
// scheduler is DeepSpeed's constant rate. "auto" takes what the Hugging Face Trainer would give
// it from zerotrain's settings: warmup_min_lr 0, warmup_max_lr optimizer.lr, warmup_num_steps
// scheduler.warmup_steps, total_num_steps train.steps.
void translate_scheduler(Walker& w) {
  const json* type = w.find("scheduler.type");
  if (type == nullptr) {  // no scheduler (a section without a type is none either): a constant rate
    w.default_to("scheduler.type", "scheduler.type", "constant");
    w.handled.insert("scheduler.params");
    return;
  }
  const std::string name = type->is_string() ? type->get<std::string>() : type->dump();
  w.handled.insert("scheduler.type");
  w.handled.insert("scheduler.params");
  auto param = [&](const char* key) { return "scheduler.params." + std::string(key); };
  if (name != "WarmupLR" && name != "WarmupDecayLR" && name != "WarmupCosineLR") {
    w.problems.push_back(fmt::format("scheduler.type '{}' is not available; zerotrain has DeepSpeed's WarmupLR, "
                                     "WarmupDecayLR and WarmupCosineLR (and its own constant, warmup_linear, "
                                     "warmup_cosine)",
                                     name));
    return;
  }
  w.set("scheduler.type", name);
  // DeepSpeed's defaults: log warmup over 1000 steps.
  w.default_to(param("warmup_type"), "scheduler.warmup_type", "log");
  if (const json* v = w.find(param("warmup_type")); v != nullptr) {
    const bool known = v->is_string() && (v->get<std::string>() == "log" || v->get<std::string>() == "linear");
    w.set("scheduler.warmup_type", known ? *v : json("log"));
    if (!known)
      w.out.notes.push_back(fmt::format("scheduler.params.warmup_type {}: neither log nor linear, so log, as "
                                        "DeepSpeed does (with a warning)",
                                        v->dump()));
  }
  w.default_to(param("warmup_num_steps"), "scheduler.warmup_steps", 1000);
  if (const json* v = w.find(param("warmup_num_steps")); v != nullptr && !Walker::is_auto(*v)) {
    if (!v->is_number_integer() || v->get<std::int64_t>() < 1)
      w.problems.push_back(fmt::format("'{}' must be a positive integer, found {} (DeepSpeed refuses it too)",
                                       param("warmup_num_steps"), v->dump()));
    else
      w.set("scheduler.warmup_steps", *v);
  }
  if (const json* v = w.find(param("last_batch_iteration")); v != nullptr && !(v->is_number_integer() && *v == -1))
    w.problems.push_back(fmt::format("scheduler.params.last_batch_iteration {}: a run starts its schedule at the "
                                     "beginning; continue one with `zerotrain train --resume`",
                                     v->dump()));
  if (name != "WarmupLR") {
    if (const json* v = w.find(param("total_num_steps")); v == nullptr)
      w.problems.push_back(fmt::format("{} needs scheduler.params.total_num_steps (DeepSpeed refuses it without)", name));
    else if (std::optional<std::int64_t> total = w.integer(param("total_num_steps")))
      w.set("train.steps", *total);
  }
  if (name == "WarmupCosineLR") {
    // The ratios apply to the optimizer's rate, which may come from the rest of the config.
    const std::optional<double> start = w.number(param("warmup_min_ratio"));
    const std::optional<double> end = w.number(param("cos_min_ratio"));
    if (start.value_or(0) < 0 || start.value_or(0) > 1 || end.value_or(0) < 0 || end.value_or(0) > 1)
      w.problems.push_back("scheduler.params.warmup_min_ratio and cos_min_ratio are ratios of the rate, in 0..1");
    // Left out, DeepSpeed's defaults (0 and 1e-4), below a --config YAML like every default.
    if (!w.auto_at(param("warmup_min_ratio")))
      (start ? w.out.ratios_of_lr : w.out.default_ratios_of_lr).push_back({"scheduler.warmup_min_lr", start.value_or(0.0)});
    if (!w.auto_at(param("cos_min_ratio")))
      (end ? w.out.ratios_of_lr : w.out.default_ratios_of_lr).push_back({"scheduler.min_lr", end.value_or(1e-4)});
  } else {
    w.default_to(param("warmup_min_lr"), "scheduler.warmup_min_lr", 0.0);
    if (std::optional<double> start = w.number(param("warmup_min_lr"))) w.set("scheduler.warmup_min_lr", *start);
    if (w.auto_at(param("warmup_min_lr"))) w.set("scheduler.warmup_min_lr", 0.0);  // what the Trainer gives
    // The scheduler sets the optimizer's rate: warmup_max_lr is the peak, whatever params.lr says.
    // WarmupLR's default is the optimizer's rate, WarmupDecayLR's 0.001.
    std::optional<double> peak = w.number(param("warmup_max_lr"));
    const std::optional<double> lr = w.number("optimizer.params.lr");
    const bool decay_default = name == "WarmupDecayLR" && w.find(param("warmup_max_lr")) == nullptr;
    if (decay_default) {  // DeepSpeed's default peak, whatever params.lr says: below a --config YAML
      w.out.deepspeed_defaults.emplace_back("optimizer.lr", json(1e-3).dump());
      w.handled.insert("optimizer.params.lr");
      if (lr && *lr != 1e-3)
        w.out.notes.push_back(fmt::format("scheduler: WarmupDecayLR without warmup_max_lr peaks at DeepSpeed's default "
                                          "0.001, not optimizer.params.lr {}: its scheduler sets the optimizer's rate",
                                          *lr));
    }
    if (peak) {
      w.set("optimizer.lr", *peak);
      w.handled.insert("optimizer.params.lr");
      if (lr && *lr != *peak)
        w.out.notes.push_back(fmt::format("scheduler: the rate peaks at warmup_max_lr {}, not optimizer.params.lr "
                                          "{}: DeepSpeed's scheduler sets the optimizer's rate",
                                          *peak, *lr));
    }
  }
  // DeepSpeed passes the parameters to the class as keyword arguments: another class's is an error.
  const std::set<std::string> known =
      name == "WarmupCosineLR"
          ? std::set<std::string>{"total_num_steps", "warmup_min_ratio", "warmup_num_steps", "cos_min_ratio",
                                  "warmup_type", "last_batch_iteration"}
          : std::set<std::string>{"warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type",
                                  "last_batch_iteration"};
  if (const json* params = w.find("scheduler.params"); params != nullptr && params->is_object())
    for (const auto& [key, value] : params->items())
      if (!known.contains(key) && !(name == "WarmupDecayLR" && key == "total_num_steps"))
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
    if (w.auto_at("gradient_accumulation_steps"))
      w.problems.push_back("train_batch_size with gradient_accumulation_steps \"auto\" and no "
                           "train_micro_batch_size_per_gpu: give one of the two (the Trainer fills both)");
    const std::int64_t steps = accumulation.value_or(1);  // DeepSpeed's default
    if (*total % (steps * world) != 0) {
      w.problems.push_back(fmt::format("train_batch_size {} is not a multiple of gradient_accumulation_steps {} x {}",
                                       *total, steps, ranks));
    } else {
      micro = *total / (steps * world);
      accumulation = steps;
    }
  }
  if (micro) w.set("train.train_micro_batch_size_per_gpu", *micro);
  if (accumulation) w.set("train.gradient_accumulation_steps", *accumulation);
  // A micro batch without a total or an accumulation count: DeepSpeed accumulates nothing.
  if (micro && !accumulation && w.find("train_batch_size") == nullptr)
    w.default_to("gradient_accumulation_steps", "train.gradient_accumulation_steps", 1);
  if (!micro && !w.auto_at("train_micro_batch_size_per_gpu") && !w.auto_at("train_batch_size"))
    w.out.notes.push_back("neither train_batch_size nor train_micro_batch_size_per_gpu: DeepSpeed needs one; "
                          "zerotrain takes train.train_micro_batch_size_per_gpu from the rest of the config");
}

// ZeRO: stage 0 unless said; communication in the compute dtype unless said (DeepSpeed's
// communication_data_type default). The bucket sizes and overlap change speed and memory, not
// the losses: zerotrain keeps its own (measured) values for those the file leaves out, and says so.
void translate_zero(Walker& w) {
  const json* zero = w.find("zero_optimization");
  if (zero != nullptr && zero->is_object() && zero->contains("stage") && (*zero)["stage"].is_number_integer())
    w.stage = (*zero)["stage"].get<int>();
  else if (zero != nullptr && zero->is_boolean())
    w.stage = zero->get<bool>() ? 1 : 0;
  if (zero == nullptr || (zero->is_object() && !zero->contains("stage")))
    w.out.deepspeed_defaults.emplace_back("zero_optimization.stage", "0");
  w.default_to("communication_data_type", "zero_optimization.communication_data_type", "compute");
  if (w.stage == 0) return;
  std::vector<std::string> own;
  for (const char* key : {"overlap_comm", "reduce_bucket_size", "stage3_prefetch_bucket_size",
                          "stage3_param_persistence_threshold"}) {
    if (w.stage < 3 && std::string(key).starts_with("stage3")) continue;
    if (w.find(std::string("zero_optimization.") + key) == nullptr) own.emplace_back(key);
  }
  if (!own.empty()) {
    std::string list;
    for (const std::string& key : own) list += (list.empty() ? "" : ", ") + key;
    w.out.notes.push_back(fmt::format("zero_optimization: {} left out, so zerotrain's own values rather than "
                                      "DeepSpeed's defaults: they change speed and memory, not the losses",
                                      list));
  }
}

// A value that asks for nothing of a feature: false, an offload to "none", a section switched
// off, a partition or parallel size of 1 (MiCS's -1).
bool asks_for_nothing(const std::string& dotted, const json& value) {
  if (value.is_null() || (value.is_boolean() && !value.get<bool>())) return true;
  if (value.is_number_integer() && dotted.ends_with("_size")) return value.get<std::int64_t>() <= 1;
  if (!value.is_object()) return false;
  if (value.contains("device") && value["device"] == "none") return true;
  if (value.contains("enabled")) {
    const json& on = value["enabled"];
    return (on.is_boolean() && !on.get<bool>()) || (on.is_string() && lower(on.get<std::string>()) == "false");
  }
  // A parallelism section whose sizes are all 1 (tensor_parallel: {"autotp_size": 1}).
  bool sizes_only = !value.empty();
  for (const auto& [key, v] : value.items())
    sizes_only = sizes_only && key.ends_with("_size") && v.is_number_integer() && v.get<std::int64_t>() <= 1;
  return sizes_only;
}

void walk(Walker& w, const json& node, const std::string& prefix) {
  for (const auto& [key, value] : node.items()) {
    const std::string dotted = prefix.empty() ? key : prefix + "." + key;
    if (w.handled.contains(dotted)) continue;
    if (auto instead = deepspeed_keys::unsupported().find(dotted); instead != deepspeed_keys::unsupported().end()) {
      if (asks_for_nothing(dotted, value))
        w.out.notes.push_back(fmt::format("{}: {}, nothing to do", dotted, value.dump()));
      else
        w.problems.push_back(fmt::format("'{}' is not supported: {}", dotted, instead->second));
      continue;
    }
    if (auto direct = deepspeed_keys::direct().find(dotted); direct != deepspeed_keys::direct().end()) {
      if (Walker::is_auto(value))
        w.out.notes.push_back(fmt::format("{}: \"auto\", zerotrain's {} from the rest of the config", dotted,
                                          direct->second));
      else if (dotted == "communication_data_type")  // DeepSpeed reads it in any case
        w.set(direct->second, value.is_string() ? json(lower(value.get<std::string>())) : value);
      else
        w.set(direct->second, value);
      continue;
    }
    if (auto no_op = deepspeed_keys::no_op().find(dotted); no_op != deepspeed_keys::no_op().end()) {
      if (w.stage < 3 && dotted.starts_with("zero_optimization.stage3_"))
        w.out.notes.push_back(fmt::format("{}: accepted, a stage-3 setting at stage {}", dotted, w.stage));
      else
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

// DeepSpeed's value of a zerotrain key for this file: what it states, else DeepSpeed's default.
std::optional<std::string> deepspeed_value(const DeepSpeedTranslation& t, const std::string& key) {
  for (const auto* settings : {&t.settings, &t.deepspeed_defaults})
    for (const auto& [k, v] : *settings)
      if (k == key) return v;
  return std::nullopt;
}

// Two YAML/JSON value texts that mean the same value (1 and 1.0, "fp32" and fp32).
bool same_value(const std::string& a, const std::string& b) {
  const auto parse = [](const std::string& text) {
    json value = json::parse(text, nullptr, false);
    return value.is_discarded() ? json(text) : value;
  };
  const json x = parse(a), y = parse(b);
  if (x.is_number() && y.is_number()) return x.get<double>() == y.get<double>();
  if (x.is_array() && y.is_array() && x.size() == y.size()) {
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!same_value(x[i].dump(), y[i].dump())) return false;
    return true;
  }
  return x == y;
}

std::string unquoted(const std::string& text) {
  const json value = json::parse(text, nullptr, false);
  return value.is_string() ? value.get<std::string>() : text;
}

std::string settings_yaml(const DeepSpeedTranslation::Settings& settings) {
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

}  // namespace

std::string DeepSpeedTranslation::yaml() const { return settings_yaml(settings); }
std::string DeepSpeedTranslation::defaults_yaml() const { return settings_yaml(deepspeed_defaults); }

std::vector<std::string> differences_from_deepspeed(const DeepSpeedTranslation& translation, const Config& config) {
  std::vector<std::string> lines;
  for (const ConfigKey& key : config_keys()) {
    const std::optional<std::string> expected = deepspeed_value(translation, key.path);
    if (!expected) continue;
    const std::string actual = format_config_value(key, key.read(config));
    if (!same_value(*expected, actual))
      lines.push_back(fmt::format("{} is {} (from --config or --set); DeepSpeed runs this file with {}", key.path,
                                  actual, unquoted(*expected)));
  }
  std::vector<std::pair<std::string, double>> ratios = translation.ratios_of_lr;
  ratios.insert(ratios.end(), translation.default_ratios_of_lr.begin(), translation.default_ratios_of_lr.end());
  for (const auto& [path, ratio] : ratios) {
    const ConfigKey* key = find_config_key(path);
    const double actual = std::get<double>(key->read(config)), expected = ratio * config.optimizer.lr;
    if (std::abs(actual - expected) > 1e-12 * std::abs(expected))
      lines.push_back(fmt::format("{} is {} (from --config or --set); DeepSpeed runs this file with {} x "
                                  "optimizer.lr = {:.6g}",
                                  path, actual, ratio, expected));
  }
  return lines;
}

DeepSpeedTranslation translate_deepspeed_config(const std::filesystem::path& file, int world_size,
                                                const std::string& ranks_from) {
  std::string why;
  const std::optional<std::string> text = read_regular_file(file, why);
  if (!text) throw UserError(fmt::format("cannot read DeepSpeed config '{}': {}", file.string(), why));
  const json root = parse_json_input(*text, file.string());
  if (!root.is_object()) throw UserError(fmt::format("{}: a DeepSpeed config is a JSON object", file.string()));
  Walker w{root, {}, {}, {}, 0};
  try {
    translate_precision(w);
    translate_optimizer(w);
    translate_scheduler(w);
    translate_batch(w, world_size, ranks_from);
    translate_zero(w);
    translate_activation_checkpointing(w);
    // DeepSpeed 0.19's default (older versions clip nothing): the tests hold it against DeepSpeed's parser.
    w.default_to("gradient_clipping", "train.gradient_clipping", 1.0);
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
