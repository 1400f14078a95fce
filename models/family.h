// A model family (GPT-2, Llama, the MLP): everything the runtime needs to know of one, asked
// through one registry, so that no code above models/ switches on the model type. A family's file
// (gpt2_family.cpp, llama_family.cpp, mlp_family.cpp) turns the config's `model:` section into its
// Model; the Model itself answers the rest (input kind, vocabulary, FLOPs, Hugging Face names).
// Adding a family: docs/howto.md.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "models/model.h"
#include "models/model_config.h"

namespace zt::models {

// A matrix product (M, K) x (K, N).
struct GemmShape {
  int M = 0, N = 0, K = 0;
};

// A check of the family's `model:` keys against each other. The config loader runs it when model.type
// is this family, and docs/config.md lists it under "Checks across keys".
struct ModelRule {
  std::string description;        // for the docs
  std::vector<std::string> keys;  // the keys involved ("model.n_head"); the first one given is blamed
  // What is wrong with config, or nothing when it satisfies the rule.
  std::function<std::optional<std::string>(const ModelConfig& config)> check;
};

// A named shape (model.preset): the `model:` keys it sets and their values, in the order the docs
// list them. The config fills in those of them that it does not give itself.
struct FamilyPreset {
  using Value = std::variant<std::int64_t, double, std::string>;
  ModelPreset preset = ModelPreset::none;
  std::string name;  // as model.preset spells it
  std::string description;
  std::vector<std::pair<std::string, Value>> values;
};

class ModelFamily {
 public:
  virtual ~ModelFamily() = default;

  // How model.type names the family ("gpt2", "llama", "mlp").
  virtual std::string_view name() const = 0;
  virtual ModelType type() const = 0;
  virtual std::vector<ModelRule> rules() const { return {}; }
  virtual std::vector<FamilyPreset> presets() const { return {}; }
  // The most rows (micro batch x positions) one micro batch may have: what the family's kernels
  // can index.
  virtual std::int64_t max_rows_per_micro_batch() const { return std::numeric_limits<std::int64_t>::max(); }

  // Token models train on token shards and are what eval, sample and Hugging Face exchange take;
  // feature models (the MLP) train on a synthetic task and see one position per row.
  virtual bool reads_tokens() const = 0;
  // The model the config describes. Throws std::invalid_argument on inconsistent sizes.
  virtual std::unique_ptr<Model> build(const ModelConfig& config) const = 0;
  // The same model cut down to what a compute-rate measurement needs: products of the full
  // model's widths at a fraction of its memory. By default one layer and a vocabulary of at most
  // 256 (a token model's layers are what the rate is measured on).
  virtual ModelConfig measurement_copy(const ModelConfig& config) const;
  // The product whose sgemm rate is the CPU MFU ceiling: the model's widest per-layer product for
  // a micro batch (micro_batch x seq_len rows).
  virtual GemmShape widest_product(const ModelConfig& config, int micro_batch, int seq_len) const = 0;
};

const ModelFamily& model_family(ModelType type);
// Every family, in the order model.type lists them.
std::span<const ModelFamily* const> model_families();

// The rule every transformer family shares: heads split the width evenly.
ModelRule heads_divide_width_rule();

// Positions per row of a micro batch: the configured sequence length for a token model, 1 for a
// feature model (its rows are samples).
int positions_per_row(const ModelConfig& config, std::int64_t seq_len);

}  // namespace zt::models
