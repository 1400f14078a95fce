// How a model's parameters are named and laid out in a Hugging Face `transformers` checkpoint.
//
// Each model family that can be exchanged with Hugging Face describes itself (Model::hf_description:
// GPT-2's in gpt2_hf_names.cpp, Llama's in llama_hf_names.cpp): a table mapping every Hugging Face
// tensor to a zerotrain tensor of some block, and the config.json of an export. Export and import
// (runtime/interop/) only walk the description, so another family plugs in with one of its own.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zt::models {

struct HfTensorMapping {
  std::string hf_name;  // e.g. "transformer.h.0.attn.c_attn.weight"
  std::size_t block = 0;  // the zerotrain block holding it
  std::string tensor;     // its name in that block's ParamLayout, e.g. "attn.c_attn.weight"
  // Rows of the zerotrain tensor that Hugging Face has (the rest is zerotrain's padding, e.g. the
  // vocabulary rounded up to a multiple of 64); 0 = all of them.
  std::size_t rows = 0;
  // The zerotrain (rows, cols) matrix is stored as (cols, rows): GPT-2's Conv1D keeps weights as
  // (in, out) where zerotrain's linear layers keep (out, in).
  bool transpose = false;
};

struct HfDescription {
  std::string model_type;  // config.json's model_type, e.g. "gpt2"
  std::vector<HfTensorMapping> tensors;
  // config.json for `transformers.AutoConfig` (every shape field, activation, epsilon, tying).
  nlohmann::ordered_json config_json;
  // Tensors a Hugging Face checkpoint may hold that are not parameters here (buffers such as
  // GPT-2's attention mask, the LM head tied to wte): matched by name suffix, skipped on import.
  std::vector<std::string> ignored_suffixes;
  // A prefix some checkpoints leave out (GPT2Model rather than GPT2LMHeadModel): "transformer.".
  std::string optional_prefix;
  // What in an imported config.json (`theirs`, of this model_type) the model would compute
  // differently from `ours` (config_json above): another activation, epsilon, untied head... One
  // line each; empty when they match.
  std::vector<std::string> (*config_differences)(const nlohmann::ordered_json& ours,
                                                 const nlohmann::json& theirs) = nullptr;
};

}  // namespace zt::models
