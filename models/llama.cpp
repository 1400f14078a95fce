#include "models/llama.h"

#include <fmt/format.h>

#include <stdexcept>

#include "models/llama_blocks.h"
#include "models/llama_hf_names.h"

namespace zt::models {

LlamaConfig LlamaConfig::preset(const std::string& name) {
  LlamaConfig c;
  if (name == "llama-tiny") {
    c.n_layer = 4, c.n_head = 4, c.n_kv_head = 2, c.n_embd = 128, c.intermediate_size = 352, c.vocab_size = 256,
    c.block_size = 128;
  } else if (name == "smollm-135m") {  // HuggingFaceTB/SmolLM-135M: 134,515,008 parameters
    c.n_layer = 30, c.n_head = 9, c.n_kv_head = 3, c.n_embd = 576, c.intermediate_size = 1536, c.vocab_size = 49152,
    c.block_size = 2048;
  } else if (name == "llama-3.2-1b") {  // meta-llama/Llama-3.2-1B: 1,235,814,400 parameters
    c.n_layer = 16, c.n_head = 32, c.n_kv_head = 8, c.n_embd = 2048, c.intermediate_size = 8192,
    c.vocab_size = 128256, c.block_size = 131072, c.rope_theta = 500000.0;
    c.rope_scaling = cpu::RopeScaling{32.0f, 1.0f, 4.0f, 8192};
  } else {
    throw std::invalid_argument(
        fmt::format("unknown Llama preset '{}' (known: llama-tiny, smollm-135m, llama-3.2-1b)", name));
  }
  return c;
}

void LlamaConfig::validate() const {
  if (n_layer < 1 || n_head < 1 || n_kv_head < 1 || n_embd < 1 || intermediate_size < 1 || vocab_size < 1 ||
      block_size < 1)
    throw std::invalid_argument("Llama sizes must all be positive");
  if (n_embd % n_head != 0)
    throw std::invalid_argument(fmt::format("n_embd {} is not divisible by n_head {}", n_embd, n_head));
  if (n_head % n_kv_head != 0)
    throw std::invalid_argument(fmt::format("n_kv_head {} does not divide n_head {}", n_kv_head, n_head));
  if (head_size() % 2 != 0)
    throw std::invalid_argument(fmt::format("the head size n_embd / n_head = {} must be even for RoPE", head_size()));
  if (!(rope_theta > 0.0)) throw std::invalid_argument("rope_theta must be positive");
  if (rope_scaling.factor != 0.0f &&
      (rope_scaling.factor < 1.0f || !(rope_scaling.high_freq_factor > rope_scaling.low_freq_factor) ||
       rope_scaling.low_freq_factor <= 0.0f || rope_scaling.original_max_position < 1))
    throw std::invalid_argument(
        "Llama 3 RoPE scaling needs factor >= 1, 0 < low_freq_factor < high_freq_factor and a positive original "
        "context length");
}

Llama::Llama(const LlamaConfig& config) : config_(config) {
  config_.validate();
  auto embedding = std::make_unique<LlamaEmbeddingBlock>(config_);
  const ParamLayout& embedding_layout = embedding->layout();
  blocks_.push_back(std::move(embedding));
  for (int l = 0; l < config_.n_layer; ++l) blocks_.push_back(std::make_unique<LlamaDecoderBlock>(config_, l));
  blocks_.push_back(std::make_unique<LlamaHeadBlock>(config_, embedding_layout));
}

std::optional<HfDescription> Llama::hf_description() const { return llama_hf_description(config_); }

}  // namespace zt::models
