// Consolidated fp32 weights of a checkpoint in the safetensors layout (docs/checkpoints.md):
//
//   u64 little-endian N | N bytes of JSON header (space-padded to a multiple of 8) | tensor data
//
// The header maps "<block name>.<tensor name>" (e.g. "h0.attn.qkv.weight") to
// {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]} (bytes, relative to the data),
// plus "__metadata__": string values with the format, step, model name and the config (YAML).
#pragma once

#include <cstdint>
#include <filesystem>

#include "models/model.h"
#include "runtime/checkpoint/checkpoint_reader.h"

namespace zt::checkpoint {

struct ExportResult {
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;
};

// model: built from reader.config().model (its blocks must match the checkpoint's).
ExportResult export_safetensors(CheckpointReader& reader, const models::Model& model,
                                const std::filesystem::path& output);

}  // namespace zt::checkpoint
