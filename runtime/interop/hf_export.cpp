#include "runtime/interop/hf_export.h"

#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_file_io.h"
#include "runtime/interop/hf_model_family.h"
#include "runtime/interop/hf_tensor_layout.h"
#include "runtime/interop/safetensors_file.h"

namespace zt::interop {

HfExportResult export_hf(checkpoint::CheckpointReader& reader, const models::Model& model,
                         const std::filesystem::path& dir) {
  reader.check_blocks_match(model);
  const HfModelFamily family = hf_model_family(model);
  std::filesystem::create_directories(dir);

  SafetensorsWriter writer;
  for (const models::HfTensorMapping& m : family.tensors)
    writer.declare(m.hf_name, hf_shape(m, model.block(m.block).layout().find(m.tensor)));
  writer.begin(dir / "model.safetensors", {{"format", "pt"}});
  // One tensor in memory at a time.
  for (const models::HfTensorMapping& m : family.tensors) {
    const models::ParamTensor& t = model.block(m.block).layout().find(m.tensor);
    std::vector<float> values(t.numel);
    reader.read_kind("master", m.block, t.offset, t.numel, values.data());
    writer.append(to_hf_layout(m, t, values));
  }
  HfExportResult result;
  result.tensors = family.tensors.size();
  result.bytes = writer.finish();
  checkpoint::write_file_synced(dir / "config.json", family.config_json.dump(2) + "\n");
  checkpoint::sync_directory(dir);
  return result;
}

}  // namespace zt::interop
