// How a model's parameters are named and laid out in a Hugging Face `transformers` checkpoint.
//
// Each model family that can be exchanged with Hugging Face provides one table (GPT-2:
// gpt2_hf_tensors) mapping every Hugging Face tensor to a zerotrain tensor of some block. Export
// and import (runtime/interop/) only walk the table, so another family plugs in with a table of
// its own and its config.json keys (runtime/interop/hf_model_family.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

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

}  // namespace zt::models
