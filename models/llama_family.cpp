// The Llama family (Llama 2/3, SmolLM, Qwen3 with QK-norm): the config's model keys to a Llama.
#include <fmt/format.h>

#include "models/family.h"
#include "models/llama.h"

namespace zt::models {
namespace {

LlamaConfig llama_config(const ModelConfig& config) {
  LlamaConfig llama;
  llama.n_layer = static_cast<int>(config.n_layer);
  llama.n_head = static_cast<int>(config.n_head);
  llama.n_kv_head = static_cast<int>(config.n_kv_head > 0 ? config.n_kv_head : config.n_head);
  llama.n_embd = static_cast<int>(config.n_embd);
  llama.intermediate_size =
      static_cast<int>(config.intermediate_size > 0 ? config.intermediate_size : 4 * config.n_embd);
  llama.vocab_size = static_cast<int>(config.vocab_size);
  llama.block_size = static_cast<int>(config.block_size);
  llama.rope_theta = config.rope_theta;
  llama.rope_scaling = {static_cast<float>(config.rope_scaling_factor), static_cast<float>(config.rope_low_freq_factor),
                        static_cast<float>(config.rope_high_freq_factor),
                        static_cast<int>(config.rope_original_max_position)};
  llama.rms_norm_eps = static_cast<float>(config.rms_norm_eps);
  llama.tie_embeddings = config.tie_embeddings;
  llama.qk_norm = config.qk_norm;
  return llama;
}

std::vector<ModelRule> llama_rules() {
  return {
      heads_divide_width_rule(),
      {"`model.n_kv_head` divides `model.n_head`.",
       {"model.n_kv_head", "model.n_head", "model.preset"},
       [](const ModelConfig& m) -> std::optional<std::string> {
         if (m.n_kv_head == 0 || m.n_head % m.n_kv_head == 0) return std::nullopt;
         return fmt::format("model.n_kv_head = {} does not divide model.n_head = {} (each key/value head serves "
                            "an equal group of query heads)",
                            m.n_kv_head, m.n_head);
       }},
      {"the head size `model.n_embd / model.n_head` is even (RoPE rotates pairs of channels).",
       {"model.n_embd", "model.n_head", "model.preset"},
       [](const ModelConfig& m) -> std::optional<std::string> {
         if ((m.n_embd / m.n_head) % 2 == 0) return std::nullopt;
         return fmt::format("model.n_embd / model.n_head = {} / {} = {} is odd; rotary embeddings need an even "
                            "head size",
                            m.n_embd, m.n_head, m.n_embd / m.n_head);
       }},
      {"`model.rope_scaling_factor` is 0 or at least 1, and `rope_high_freq_factor` > `rope_low_freq_factor`.",
       {"model.rope_scaling_factor", "model.rope_high_freq_factor", "model.rope_low_freq_factor", "model.preset"},
       [](const ModelConfig& m) -> std::optional<std::string> {
         if (m.rope_scaling_factor == 0) return std::nullopt;
         if (m.rope_scaling_factor < 1)
           return fmt::format("model.rope_scaling_factor = {} slows no frequency down: use 0 (off) or a factor >= 1",
                              m.rope_scaling_factor);
         if (m.rope_high_freq_factor > m.rope_low_freq_factor) return std::nullopt;
         return fmt::format("model.rope_high_freq_factor = {} must be larger than model.rope_low_freq_factor = {}",
                            m.rope_high_freq_factor, m.rope_low_freq_factor);
       }},
  };
}

// The published configs' shapes (LlamaConfig::preset) as the keys a config's preset sets.
FamilyPreset llama_preset(ModelPreset preset, std::string name, std::string description) {
  const LlamaConfig c = LlamaConfig::preset(name);
  return {preset,
          std::move(name),
          std::move(description),
          {{"model.type", std::string("llama")},
           {"model.n_layer", std::int64_t{c.n_layer}},
           {"model.n_head", std::int64_t{c.n_head}},
           {"model.n_kv_head", std::int64_t{c.n_kv_head}},
           {"model.n_embd", std::int64_t{c.n_embd}},
           {"model.intermediate_size", std::int64_t{c.intermediate_size}},
           {"model.vocab_size", std::int64_t{c.vocab_size}},
           {"model.block_size", std::int64_t{c.block_size}},
           {"model.rope_theta", c.rope_theta},
           {"model.rope_scaling_factor", static_cast<double>(c.rope_scaling.factor)}}};
}

class LlamaFamily final : public ModelFamily {
 public:
  std::string_view name() const override { return "llama"; }
  ModelType type() const override { return ModelType::llama; }
  std::vector<ModelRule> rules() const override { return llama_rules(); }
  std::vector<FamilyPreset> presets() const override {
    return {llama_preset(ModelPreset::llama_tiny, "llama-tiny",
                         "byte-level Llama that trains in minutes on a CPU (0.8M parameters)"),
            llama_preset(ModelPreset::smollm_135m, "smollm-135m",
                         "HuggingFaceTB/SmolLM-135M: 134,515,008 parameters, tied embeddings"),
            llama_preset(ModelPreset::llama_3_2_1b, "llama-3.2-1b",
                         "meta-llama/Llama-3.2-1B: 1,235,814,400 parameters, tied embeddings, Llama 3 RoPE scaling")};
  }
  bool reads_tokens() const override { return true; }
  std::unique_ptr<Model> build(const ModelConfig& config) const override {
    return std::make_unique<Llama>(llama_config(config));
  }
  // The fused gate and up projection: (B*T, C) x (C, 2I).
  GemmShape widest_product(const ModelConfig& config, int micro_batch, int seq_len) const override {
    const LlamaConfig llama = llama_config(config);
    return {micro_batch * seq_len, 2 * llama.intermediate_size, llama.n_embd};
  }
};

}  // namespace

const ModelFamily& llama_family() {
  static const LlamaFamily family;
  return family;
}

}  // namespace zt::models
