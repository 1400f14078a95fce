#include "runtime/interop/safetensors_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>

#include "core/dtype.h"
#include "core/error.h"

namespace zt::interop {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian, read as in memory");

namespace {

// Headers of real checkpoints are a few hundred KiB; anything far larger is not a safetensors file.
constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;

std::size_t element_bytes(const std::string& dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  return 0;  // unsupported for reading as fp32
}

}  // namespace

SafetensorsReader::SafetensorsReader(std::filesystem::path path) : path_(std::move(path)) {
  std::error_code error;
  const std::uint64_t file_bytes = std::filesystem::file_size(path_, error);
  if (error) throw UserError(fmt::format("cannot read {}: {}", path_.string(), error.message()));
  file_ = checkpoint::open_for_reading(path_);
  std::uint64_t header_bytes = 0;
  if (file_bytes < sizeof header_bytes)
    throw UserError(fmt::format("{} is not a safetensors file: {} bytes, shorter than the 8-byte header size",
                                path_.string(), file_bytes));
  checkpoint::read_exactly(file_, path_, 0, std::as_writable_bytes(std::span(&header_bytes, 1)));
  if (header_bytes > kMaxHeaderBytes || header_bytes > file_bytes - sizeof header_bytes)
    throw UserError(fmt::format("{} is not a safetensors file: its first 8 bytes give a header of {} bytes, "
                                "but the file has {}", path_.string(), header_bytes, file_bytes));
  std::string text(header_bytes, '\0');
  checkpoint::read_exactly(file_, path_, sizeof header_bytes, std::as_writable_bytes(std::span(text.data(), text.size())));
  data_start_ = sizeof header_bytes + header_bytes;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(fmt::format("{} is not a safetensors file: its header is not JSON ({})", path_.string(), e.what()));
  }
  if (!header.is_object())
    throw UserError(fmt::format("{} is not a safetensors file: its header is not a JSON object", path_.string()));
  const std::uint64_t data_bytes = file_bytes - data_start_;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") continue;
    SafetensorsEntry entry;
    try {
      entry.dtype = value.at("dtype").get<std::string>();
      entry.shape = value.at("shape").get<std::vector<std::size_t>>();
      const nlohmann::json& given = value.at("data_offsets");
      // Whole byte counts only: a fractional or negative one would be rounded into another tensor's bytes.
      if (!given.is_array() || given.size() != 2 || !given[0].is_number_unsigned() || !given[1].is_number_unsigned())
        throw std::invalid_argument(fmt::format("data_offsets {} is not [begin, end] in whole bytes", given.dump()));
      const auto offsets = given.get<std::vector<std::uint64_t>>();
      entry.begin = offsets[0];
      entry.end = offsets[1];
    } catch (const std::exception& e) {
      throw UserError(fmt::format("{}: tensor '{}' has a malformed header entry ({})", path_.string(), name, e.what()));
    }
    if (entry.begin > entry.end)
      throw UserError(fmt::format("{}: tensor '{}' has data_offsets [{}, {}] that end before they begin (a damaged or "
                                  "hand-made file?)",
                                  path_.string(), name, entry.begin, entry.end));
    if (entry.end > data_bytes)
      throw UserError(fmt::format("{}: tensor '{}' has bytes [{}, {}) but the data holds {} bytes (truncated file?)",
                                  path_.string(), name, entry.begin, entry.end, data_bytes));
    tensors_.emplace(name, std::move(entry));
  }
  // No two tensors may share bytes (the safetensors library refuses such files too): sorted by
  // where they begin, each ends before the next begins.
  std::vector<std::pair<const std::string*, const SafetensorsEntry*>> by_offset;
  for (const auto& [name, entry] : tensors_) by_offset.emplace_back(&name, &entry);
  std::sort(by_offset.begin(), by_offset.end(), [](const auto& a, const auto& b) { return a.second->begin < b.second->begin; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const auto& [before, first] = by_offset[i - 1];
    const auto& [after, second] = by_offset[i];
    if (first->end > second->begin)
      throw UserError(fmt::format("{}: tensors '{}' [{}, {}) and '{}' [{}, {}) overlap: each tensor needs bytes of its "
                                  "own (a damaged or hand-made file?)",
                                  path_.string(), *before, first->begin, first->end, *after, second->begin,
                                  second->end));
  }
}

std::vector<float> SafetensorsReader::read_f32(const std::string& name) const {
  const SafetensorsEntry& entry = tensors_.at(name);
  const std::size_t bytes_each = element_bytes(entry.dtype);
  if (bytes_each == 0)
    throw UserError(fmt::format("{}: tensor '{}' has dtype {}; only F32, F16 and BF16 weights can be loaded",
                                path_.string(), name, entry.dtype));
  std::uint64_t numel = 1;
  for (std::size_t d : entry.shape) numel *= d;
  if (numel * bytes_each != entry.end - entry.begin)
    throw UserError(fmt::format("{}: tensor '{}' of shape [{}] and dtype {} needs {} bytes, its data_offsets give {}",
                                path_.string(), name, fmt::join(entry.shape, ", "), entry.dtype, numel * bytes_each,
                                entry.end - entry.begin));
  std::vector<std::byte> raw(entry.end - entry.begin);
  checkpoint::read_exactly(file_, path_, data_start_ + entry.begin, raw);
  std::vector<float> values(numel);
  const DType dtype = entry.dtype == "F32" ? DType::f32 : entry.dtype == "F16" ? DType::f16 : DType::bf16;
  convert_host(raw.data(), dtype, values.data(), DType::f32, numel);
  return values;
}

namespace {
const char* safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32: return "F32";
    case DType::bf16: return "BF16";
    case DType::f16: return "F16";
    case DType::i32: break;
  }
  throw std::invalid_argument("safetensors export: parameters are f32, bf16 or f16");
}
}  // namespace

SafetensorsWriter::SafetensorsWriter(DType dtype) : dtype_(dtype) { safetensors_dtype(dtype); }

void SafetensorsWriter::declare(std::string name, std::vector<std::size_t> shape) {
  std::uint64_t numel = 1;
  for (std::size_t d : shape) numel *= d;
  declared_.push_back({std::move(name), std::move(shape), numel});
}

void SafetensorsWriter::begin(const std::filesystem::path& path, const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header;
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const Declared& d : declared_) {
    const std::uint64_t end = offset + d.numel * dtype_size(dtype_);
    header[d.name] = {{"dtype", safetensors_dtype(dtype_)}, {"shape", d.shape}, {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
  const std::uint64_t header_bytes = text.size();
  file_ = std::make_unique<checkpoint::SyncedFileWriter>(path);
  file_->append(std::as_bytes(std::span(&header_bytes, 1)));
  file_->append(std::as_bytes(std::span(text.data(), text.size())));
  bytes_ = sizeof header_bytes + header_bytes + offset;
}

void SafetensorsWriter::append(std::span<const float> values) {
  if (written_ >= declared_.size() || values.size() != declared_[written_].numel)
    throw std::logic_error("SafetensorsWriter::append: data does not match the declared tensors");
  if (dtype_ == DType::f32) {
    file_->append(std::as_bytes(values));
  } else {
    std::vector<std::byte> stored(values.size() * dtype_size(dtype_));
    convert_host(values.data(), DType::f32, stored.data(), dtype_, values.size());
    file_->append(stored);
  }
  ++written_;
}

std::uint64_t SafetensorsWriter::finish() {
  if (written_ != declared_.size()) throw std::logic_error("SafetensorsWriter::finish: tensors left unwritten");
  file_->finish();
  return bytes_;
}

}  // namespace zt::interop
