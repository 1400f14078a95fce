#include "runtime/interop/hf_export.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "core/safe_file.h"
#include "core/stop_signal.h"
#include "runtime/checkpoint/checkpoint_file_io.h"
#include "runtime/interop/hf_model_family.h"
#include "runtime/interop/hf_tensor_layout.h"
#include "runtime/interop/safetensors_file.h"

namespace zt::interop {

HfExportResult export_hf(checkpoint::CheckpointReader& reader, const models::Model& model,
                         const std::filesystem::path& dir, const HfTokenizerExport* tokenizer) {
  reader.check_blocks_match(model);
  const HfModelFamily family = hf_model_family(model);
  // The directory appears whole or not at all: it is written under a temporary name beside it and
  // renamed into place, so a failed export leaves nothing that blocks the next one. An existing
  // empty directory is replaced; one with anything in it is left alone.
  std::error_code error;
  const std::filesystem::file_status existing = std::filesystem::symlink_status(dir, error);
  if (std::filesystem::exists(existing) &&
      (!std::filesystem::is_directory(existing) || !std::filesystem::is_empty(dir, error)))
    throw UserError(fmt::format("{} already exists{}; export --format hf writes a new directory (remove it, or name "
                                "another)",
                                dir.string(), std::filesystem::is_directory(existing) ? " and is not empty" : ""));
  const std::filesystem::path parent = dir.has_parent_path() ? dir.parent_path() : ".";
  std::filesystem::create_directories(parent);
  TemporaryDirectory staging(parent / ("." + dir.filename().string() + ".tmp-"));

  // The run's compute dtype: a bf16 run exports the bf16 parameters it trained with (its fp32
  // master weights rounded once, as every step rounds them), with config.json's torch_dtype.
  const DType dtype = reader.config().precision.dtype;
  SafetensorsWriter writer(dtype);
  for (const models::HfTensorMapping& m : family.tensors)
    writer.declare(m.hf_name, hf_shape(m, model.block(m.block).layout().find(m.tensor)));
  writer.begin(staging.path() / "model.safetensors", {{"format", "pt"}});
  // One tensor in memory at a time.
  for (const models::HfTensorMapping& m : family.tensors) {
    throw_if_stop_requested();
    const models::ParamTensor& t = model.block(m.block).layout().find(m.tensor);
    std::vector<float> values(t.numel);
    reader.read_kind("master", m.block, t.offset, t.numel, values.data());
    writer.append(to_hf_layout(m, t, values));
  }
  HfExportResult result;
  result.tensors = family.tensors.size();
  result.bytes = writer.finish();
  nlohmann::ordered_json config_json = family.config_json;
  config_json["torch_dtype"] = dtype == DType::bf16 ? "bfloat16" : dtype == DType::f16 ? "float16" : "float32";
  if (tokenizer != nullptr) {
    config_json["bos_token_id"] = tokenizer->end_of_text;
    config_json["eos_token_id"] = tokenizer->end_of_text;
    config_json["pad_token_id"] = tokenizer->end_of_text;
    for (const auto& [name, content] : tokenizer->files) checkpoint::write_file_synced(staging.path() / name, content);
  }
  checkpoint::write_file_synced(staging.path() / "config.json", config_json.dump(2) + "\n");
  checkpoint::sync_directory(staging.path());
  // mkdtemp made it 0700; the export is an ordinary directory, as mkdir would make it.
  staging.set_default_permissions();
  throw_if_stop_requested();
  if (std::rename(staging.path().c_str(), dir.c_str()) != 0)
    throw UserError(fmt::format("{}: cannot move the export into place: {}", dir.string(), std::strerror(errno)));
  staging.keep();
  checkpoint::sync_directory(parent);
  return result;
}

}  // namespace zt::interop
