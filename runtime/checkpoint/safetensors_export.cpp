#include "runtime/checkpoint/safetensors_export.h"

#include "core/safe_file.h"
#include "core/stop_signal.h"

#include <fmt/format.h>

#include <bit>
#include <vector>

#include "runtime/checkpoint/checkpoint_file_io.h"

namespace zt::checkpoint {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian, written as in memory");

ExportResult export_safetensors(CheckpointReader& reader, const models::Model& model,
                                const std::filesystem::path& output) {
  reader.check_blocks_match(model);
  const Manifest& manifest = reader.manifest();
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "zerotrain"},
                            {"step", std::to_string(manifest.step)},
                            {"model", model.name()},
                            {"config_yaml", manifest.config_yaml}};
  // Tensors are stored back to back in block order, each block's in layout order; a block's flat
  // parameter is exactly its tensors concatenated, so the data is the blocks' parameters in order.
  ExportResult result;
  std::uint64_t data_bytes = 0;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    const models::Block& block = model.block(b);
    for (const models::ParamTensor& t : block.layout().tensors()) {
      const std::uint64_t begin = data_bytes + t.offset * sizeof(float);
      header[block.name() + "." + t.name] = {
          {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, begin + t.numel * sizeof(float)}}};
      ++result.tensors;
    }
    data_bytes += manifest.blocks[b].numel * sizeof(float);
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
  const std::uint64_t header_size = header_text.size();  // little-endian, as in memory
  // A temporary file renamed over `output` at the end: a failed export (a full disk, a corrupt
  // shard) leaves an earlier good file in place, never a truncated one.
  AtomicFile file(output);
  file.write(std::as_bytes(std::span(&header_size, 1)));
  file.write(header_text);
  // One block in memory at a time.
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    throw_if_stop_requested();
    std::vector<float> values(manifest.blocks[b].numel);
    if (!values.empty()) reader.read_kind("master", b, 0, values.size(), values.data());
    file.write(std::as_bytes(std::span(values)));
  }
  file.commit();
  result.bytes = sizeof header_size + header_size + data_bytes;
  return result;
}

}  // namespace zt::checkpoint
