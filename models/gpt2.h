// GPT-2: [embedding block (wte, wpe)] + n_layer transformer blocks + [head block (ln_f; the LM
// head reuses wte: tied to block 0)]. Pre-LayerNorm, GELU (tanh), causal attention, as in
// OpenAI's GPT-2 / nanoGPT, so PyTorch reproduces it exactly (tools/make_gpt2_fixtures.py).
#pragma once

#include <string>

#include "models/model.h"

namespace zt::models {

struct GPT2Config {
  int n_layer = 12;
  int n_head = 12;
  int n_embd = 768;
  int vocab_size = 50257;
  // wte has padded_vocab_size rows (>= vocab_size); logits of the padding are never used and get
  // zero gradient. Padding to a multiple of 64 keeps the GPU LM-head product aligned.
  int padded_vocab_size = 50257;
  int block_size = 1024;

  // "tiny" (tests: 2 layers, 4 heads, 32 wide, vocab 64, 16 positions), "gpt2-124m", "gpt2-350m".
  // Throws std::invalid_argument naming the known presets on anything else.
  static GPT2Config preset(const std::string& name);
  void validate() const;  // throws std::invalid_argument on inconsistent sizes
};

class GPT2 final : public Model {
 public:
  explicit GPT2(const GPT2Config& config);
  const GPT2Config& config() const { return config_; }

  std::string name() const override { return "gpt2"; }
  InputKind input_kind() const override { return InputKind::tokens; }
  int max_seq_len() const override { return config_.block_size; }
  int vocab_size() const override { return config_.vocab_size; }
  std::optional<HfDescription> hf_description() const override;

 private:
  GPT2Config config_;
};

}  // namespace zt::models
