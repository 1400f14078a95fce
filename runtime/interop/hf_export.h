// `zerotrain export --format hf`: a checkpoint as a directory that
// `transformers.AutoModelForCausalLM.from_pretrained(DIR)` loads with no missing or unexpected
// keys: config.json and model.safetensors (fp32, Hugging Face's names and layouts, wte holding
// exactly vocab_size rows).
#pragma once

#include <cstdint>
#include <filesystem>

#include "models/model.h"
#include "runtime/checkpoint/checkpoint_reader.h"

namespace zt::interop {

struct HfExportResult {
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;  // of model.safetensors
};

// model: built from reader.config().model. Creates `dir` when missing; writes only the two files.
HfExportResult export_hf(checkpoint::CheckpointReader& reader, const models::Model& model,
                         const std::filesystem::path& dir);

}  // namespace zt::interop
