#include "runtime/interop/hf_weights.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "core/error.h"
#include "runtime/interop/hf_model_family.h"
#include "runtime/interop/hf_tensor_layout.h"
#include "runtime/interop/safetensors_file.h"
#include "core/safe_file.h"

namespace zt::interop {
namespace fs = std::filesystem;
namespace {

std::string shape_text(const std::vector<std::size_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace

fs::path hf_weights_file(const fs::path& init_from) {
  std::error_code error;
  if (!fs::exists(init_from, error))
    throw UserError(fmt::format("model.init_from: {} does not exist", init_from.string()));
  if (!fs::is_directory(init_from, error)) return init_from;
  const fs::path file = init_from / "model.safetensors";
  if (fs::exists(file, error)) return file;
  if (fs::exists(init_from / "model.safetensors.index.json", error))
    throw UserError(fmt::format("model.init_from: {} holds a sharded checkpoint (model.safetensors.index.json); "
                                "save it as one file (save_pretrained(..., max_shard_size=\"100GB\"))",
                                init_from.string()));
  if (fs::exists(init_from / "pytorch_model.bin", error))
    throw UserError(fmt::format("model.init_from: {} holds pytorch_model.bin only; zerotrain reads safetensors "
                                "(save it with save_pretrained(..., safe_serialization=True))", init_from.string()));
  throw UserError(fmt::format("model.init_from: {} has no model.safetensors (expected a directory written by "
                              "save_pretrained, or a .safetensors file)", init_from.string()));
}

HfWeights::HfWeights(const fs::path& init_from, const models::Model& model) {
  const HfModelFamily family = hf_model_family(model);
  const fs::path file = hf_weights_file(init_from);
  std::vector<std::string> problems;

  // config.json beside the weights: the same computation (its shape was already taken by the
  // config loader for keys the config left out).
  const fs::path config_json = fs::is_directory(init_from) ? init_from / "config.json" : file.parent_path() / "config.json";
  std::error_code error;
  if (fs::exists(fs::symlink_status(config_json, error))) {
    std::string why;
    const std::optional<std::string> text = read_regular_file(config_json, why);
    if (!text) throw UserError(fmt::format("cannot read {}: {}", config_json.string(), why));
    nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || !json.is_object())
      problems.push_back(fmt::format("{} is not a JSON object", config_json.string()));
    else
      for (std::string& p : hf_config_differences(family, json)) problems.push_back(config_json.string() + ": " + p);
  }

  SafetensorsReader reader(file);
  std::set<std::string> unused;
  for (const auto& [name, entry] : reader.tensors()) unused.insert(name);
  auto ignored = [&](const std::string& name) {
    return std::any_of(family.ignored_suffixes.begin(), family.ignored_suffixes.end(),
                       [&](const std::string& suffix) { return name.ends_with(suffix); });
  };

  blocks_.resize(model.num_blocks());
  for (std::size_t b = 0; b < model.num_blocks(); ++b) blocks_[b].assign(model.block(b).layout().numel(), 0.0f);
  for (const models::HfTensorMapping& m : family.tensors) {
    // GPT2Model checkpoints (e.g. the hub's "gpt2") name tensors without the "transformer." prefix.
    std::string name = m.hf_name;
    if (!reader.tensors().contains(name) && name.starts_with(family.optional_prefix) &&
        reader.tensors().contains(name.substr(family.optional_prefix.size())))
      name = name.substr(family.optional_prefix.size());
    const auto found = reader.tensors().find(name);
    if (found == reader.tensors().end()) {
      problems.push_back(fmt::format("tensor '{}' is missing", m.hf_name));
      continue;
    }
    unused.erase(name);
    const models::ParamTensor& t = model.block(m.block).layout().find(m.tensor);
    const std::vector<std::size_t> expected = hf_shape(m, t);
    if (found->second.shape != expected) {
      problems.push_back(fmt::format("tensor '{}' has shape {} in the checkpoint, the config needs {}", name,
                                     shape_text(found->second.shape), shape_text(expected)));
      continue;
    }
    const std::vector<float> values = from_hf_layout(m, t, reader.read_f32(name));
    std::copy(values.begin(), values.end(), blocks_[m.block].begin() + static_cast<std::ptrdiff_t>(t.offset));
    ++tensor_count_;
  }
  for (const std::string& name : unused)
    if (!ignored(name)) problems.push_back(fmt::format("tensor '{}' is not a parameter of {}", name, model.name()));

  if (!problems.empty()) {
    std::string message = fmt::format("model.init_from: {} does not fit this run's model ({} problem{}):",
                                      file.string(), problems.size(), problems.size() == 1 ? "" : "s");
    for (const std::string& p : problems) message += "\n  - " + p;
    throw UserError(message);
  }
}

void HfWeights::read(std::size_t block, std::size_t begin, std::size_t count, float* master, float* exp_avg,
                     float* exp_avg_sq) {
  const std::vector<float>& values = blocks_.at(block);
  std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(begin), count, master);
  std::fill_n(exp_avg, count, 0.0f);  // a fresh optimizer
  std::fill_n(exp_avg_sq, count, 0.0f);
}

}  // namespace zt::interop
