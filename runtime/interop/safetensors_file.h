// The safetensors format (https://huggingface.co/docs/safetensors):
//
//   u64 little-endian N | N bytes of JSON header | tensor data
//
// The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (bytes,
// relative to the data), plus an optional "__metadata__" of string values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "runtime/checkpoint/checkpoint_file_io.h"

namespace zt::interop {

struct SafetensorsEntry {
  std::string dtype;  // "F32", "F16", "BF16", ...
  std::vector<std::size_t> shape;
  std::uint64_t begin = 0;  // bytes, relative to the start of the data
  std::uint64_t end = 0;
};

// Reads tensors of an existing file. The header is checked when the file opens (its size, JSON,
// every entry's dtype, shape and byte range within the file); any problem is a zt::UserError
// naming the file and the tensor.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(std::filesystem::path path);
  const std::filesystem::path& path() const { return path_; }
  const std::map<std::string, SafetensorsEntry>& tensors() const { return tensors_; }
  // The tensor's elements converted to fp32 (F32, F16 and BF16 are supported).
  std::vector<float> read_f32(const std::string& name) const;

 private:
  std::filesystem::path path_;
  checkpoint::FileDescriptor file_;
  std::uint64_t data_start_ = 0;
  std::map<std::string, SafetensorsEntry> tensors_;
};

// Writes tensors stored as `dtype` (F32, BF16 or F16; the values come in fp32 and are rounded to
// nearest even, as zerotrain rounds its own parameters): declare every tensor first, then write
// their data in the same order.
class SafetensorsWriter {
 public:
  explicit SafetensorsWriter(DType dtype = DType::f32);
  void declare(std::string name, std::vector<std::size_t> shape);
  // Creates `path` with the header; then append() each declared tensor's data in order.
  void begin(const std::filesystem::path& path, const std::map<std::string, std::string>& metadata);
  void append(std::span<const float> values);
  // Checks that every declared tensor was written; returns the file's size in bytes.
  std::uint64_t finish();

 private:
  struct Declared {
    std::string name;
    std::vector<std::size_t> shape;
    std::uint64_t numel = 0;
  };
  DType dtype_;
  std::vector<Declared> declared_;
  std::unique_ptr<checkpoint::SyncedFileWriter> file_;
  std::size_t written_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace zt::interop
