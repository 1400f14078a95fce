// The Llama family of decoders (Llama 2/3, SmolLM, Qwen-style with QK-norm):
//   [embedding block (embed_tokens)] + n_layer decoder blocks + [head block (norm, lm_head)].
// A decoder block is pre-norm: x + attn(rmsnorm(x)), then x' + swiglu_mlp(rmsnorm(x')), with
// rotary position embeddings on q and k (Hugging Face's rotate_half layout, optionally Llama 3's
// frequency scaling), grouped-query attention (n_kv_head divides n_head; n_kv_head == n_head is
// multi-head, 1 is multi-query), optional QK-norm (an RMSNorm over each head of q and k before
// RoPE, as Qwen3), no biases anywhere. The output head is tied to embed_tokens (block 0) or has
// its own lm_head. Tensor names and shapes follow transformers' LlamaForCausalLM, so Hugging Face
// weights map one to one (models/README.md lists the mapping).
#pragma once

#include <string>

#include "models/ops/rope.h"
#include "models/model.h"

namespace zt::models {

struct LlamaConfig {
  int n_layer = 2;
  int n_head = 4;
  int n_kv_head = 2;
  int n_embd = 64;
  int intermediate_size = 176;
  int vocab_size = 256;
  int block_size = 64;  // the longest sequence (max_position_embeddings); RoPE has no table to size
  double rope_theta = 10000.0;
  cpu::RopeScaling rope_scaling;  // factor 0 = none
  float rms_norm_eps = 1e-5f;
  bool tie_embeddings = true;
  bool qk_norm = false;

  int head_size() const { return n_embd / n_head; }

  // "llama-tiny" (trains on a CPU in minutes), "smollm-135m" (HuggingFaceTB/SmolLM-135M),
  // "llama-3.2-1b" (meta-llama/Llama-3.2-1B). Throws std::invalid_argument naming the known
  // presets on anything else.
  static LlamaConfig preset(const std::string& name);
  void validate() const;  // throws std::invalid_argument on inconsistent sizes
};

class Llama final : public Model {
 public:
  explicit Llama(const LlamaConfig& config);
  const LlamaConfig& config() const { return config_; }

  std::string name() const override { return "llama"; }
  InputKind input_kind() const override { return InputKind::tokens; }
  int max_seq_len() const override { return config_.block_size; }
  int vocab_size() const override { return config_.vocab_size; }
  std::optional<HfDescription> hf_description() const override;

 private:
  LlamaConfig config_;
};

}  // namespace zt::models
