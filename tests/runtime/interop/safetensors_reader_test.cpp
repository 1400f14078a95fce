// The safetensors reader on hand-made files: tensors that share bytes, or offsets that are not
// whole byte counts, are refused with the tensors named (the safetensors library refuses both),
// and a well-formed file reads back its values.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/interop/safetensors_file.h"

namespace zt::interop {
namespace {

// header + `floats` float32 values 0, 1, 2, ...
std::filesystem::path write_file(const std::string& name, const std::string& header, int floats) {
  const std::filesystem::path path = std::filesystem::path(testing::TempDir()) / name;
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t size = header.size();
  out.write(reinterpret_cast<const char*>(&size), sizeof size);
  out << header;
  for (int i = 0; i < floats; ++i) {
    const float value = static_cast<float>(i);
    out.write(reinterpret_cast<const char*>(&value), sizeof value);
  }
  return path;
}

std::string refusal(const std::filesystem::path& path) {
  try {
    SafetensorsReader reader(path);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(SafetensorsReader, AWellFormedFileReadsBack) {
  const auto path = write_file("good.safetensors",
                               R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                               R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
                               4);
  SafetensorsReader reader(path);
  EXPECT_EQ(reader.read_f32("a"), (std::vector<float>{0, 1}));
  EXPECT_EQ(reader.read_f32("b"), (std::vector<float>{2, 3}));
}

TEST(SafetensorsReader, TensorsThatShareBytesAreRefused) {
  const auto path = write_file("overlap.safetensors",
                               R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                               R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                               4);
  const std::string message = refusal(path);
  EXPECT_NE(message.find("tensors 'a' [0, 8) and 'b' [4, 12) overlap"), std::string::npos) << message;
}

TEST(SafetensorsReader, OffsetsThatAreNotWholeBytesAreRefused) {
  for (const std::string offsets : {"[0, 7.5]", "[0.5, 8]", "[-4, 8]", "[0, 8, 12]", "\"0-8\""}) {
    const auto path = write_file("fraction.safetensors",
                                 R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": )" + offsets + "}}", 4);
    const std::string message = refusal(path);
    SCOPED_TRACE(offsets);
    EXPECT_NE(message.find("tensor 'a' has a malformed header entry"), std::string::npos) << message;
    EXPECT_NE(message.find("in whole bytes"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace zt::interop
