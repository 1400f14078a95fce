// The Llama family (Llama 2/3, SmolLM, Qwen3 with QK-norm): the config's model keys to a Llama.
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

class LlamaFamily final : public ModelFamily {
 public:
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
