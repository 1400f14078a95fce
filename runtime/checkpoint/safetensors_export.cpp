#include "runtime/checkpoint/safetensors_export.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "runtime/checkpoint/checkpoint_file_io.h"

namespace zt::checkpoint {

ExportResult export_safetensors(CheckpointReader& reader, const models::Model& model,
                                const std::filesystem::path& output) {
  reader.check_blocks_match(model);
  const Manifest& manifest = reader.manifest();
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "zerotrain"},
                            {"step", std::to_string(manifest.step)},
                            {"model", model.name()},
                            {"config_yaml", manifest.config_yaml}};
  // Tensors are stored back to back in block order, each block's in layout order; the flat
  // parameter is exactly its tensors concatenated, so the data is the blocks' parameters in order.
  std::vector<float> data;
  ExportResult result;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    const models::Block& block = model.block(b);
    const std::size_t numel = manifest.blocks[b].numel;
    const std::size_t base = data.size();
    data.resize(base + numel);
    if (numel > 0) reader.read_kind("master", b, 0, numel, data.data() + base);
    for (const models::ParamTensor& t : block.layout().tensors()) {
      const std::uint64_t begin = (base + t.offset) * sizeof(float);
      header[block.name() + "." + t.name] = {
          {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, begin + t.numel * sizeof(float)}}};
      ++result.tensors;
    }
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
  const std::uint64_t header_size = header_text.size();  // written little-endian, as in memory
  std::vector<std::byte> file(sizeof header_size + header_text.size() + data.size() * sizeof(float));
  std::memcpy(file.data(), &header_size, sizeof header_size);
  std::memcpy(file.data() + sizeof header_size, header_text.data(), header_text.size());
  std::memcpy(file.data() + sizeof header_size + header_text.size(), data.data(), data.size() * sizeof(float));
  write_file_synced(output, std::span<const std::byte>(file));
  result.bytes = file.size();
  return result;
}

}  // namespace zt::checkpoint
