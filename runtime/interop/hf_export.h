// `zerotrain export --format hf`: a checkpoint as a directory that
// `transformers.AutoModelForCausalLM.from_pretrained(DIR)` loads with no missing or unexpected
// keys: config.json and model.safetensors (the run's dtype, Hugging Face's names and layouts, wte
// holding exactly vocab_size rows), and the tokenizer files AutoTokenizer and generate() read.
#pragma once

#include <cstdint>
#include <filesystem>

#include "models/model.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/interop/hf_tokenizer_export.h"

namespace zt::interop {

struct HfExportResult {
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;  // of model.safetensors
};

// model: built from reader.config().model. Creates `dir` when missing; writes config.json,
// model.safetensors and, given a tokenizer, its files (bos/eos ids in config.json too).
HfExportResult export_hf(checkpoint::CheckpointReader& reader, const models::Model& model,
                         const std::filesystem::path& dir, const HfTokenizerExport* tokenizer = nullptr);

}  // namespace zt::interop
