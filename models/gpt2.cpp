#include "models/gpt2.h"

#include <fmt/format.h>

#include <stdexcept>

#include "models/gpt2_blocks.h"
#include "models/gpt2_hf_names.h"

namespace zt::models {

GPT2Config GPT2Config::preset(const std::string& name) {
  GPT2Config c;
  if (name == "tiny") {
    c.n_layer = 2, c.n_head = 4, c.n_embd = 32, c.vocab_size = 64, c.padded_vocab_size = 64, c.block_size = 16;
  } else if (name == "gpt2-124m") {
    c.n_layer = 12, c.n_head = 12, c.n_embd = 768, c.vocab_size = 50257, c.padded_vocab_size = 50304;
  } else if (name == "gpt2-350m") {
    c.n_layer = 24, c.n_head = 16, c.n_embd = 1024, c.vocab_size = 50257, c.padded_vocab_size = 50304;
  } else {
    throw std::invalid_argument(fmt::format("unknown GPT-2 preset '{}' (known: tiny, gpt2-124m, gpt2-350m)", name));
  }
  return c;
}

void GPT2Config::validate() const {
  if (n_layer < 1 || n_head < 1 || n_embd < 1 || vocab_size < 1 || block_size < 1)
    throw std::invalid_argument("GPT-2 sizes must all be positive");
  if (n_embd % n_head != 0)
    throw std::invalid_argument(fmt::format("n_embd {} is not divisible by n_head {}", n_embd, n_head));
  if (padded_vocab_size < vocab_size)
    throw std::invalid_argument(
        fmt::format("padded_vocab_size {} is smaller than vocab_size {}", padded_vocab_size, vocab_size));
}

GPT2::GPT2(const GPT2Config& config) : config_(config) {
  config_.validate();
  auto embedding = std::make_unique<GPT2EmbeddingBlock>(config_);
  const ParamLayout& embedding_layout = embedding->layout();
  blocks_.push_back(std::move(embedding));
  for (int l = 0; l < config_.n_layer; ++l) blocks_.push_back(std::make_unique<GPT2TransformerBlock>(config_, l));
  blocks_.push_back(std::make_unique<GPT2HeadBlock>(config_, embedding_layout));
}

std::optional<HfDescription> GPT2::hf_description() const { return gpt2_hf_description(config_); }

}  // namespace zt::models
