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

// Offsets whose end comes before their begin are a damaged header, not a truncated file.
TEST(SafetensorsReader, OffsetsThatEndBeforeTheyBeginAreRefusedAsSuch) {
  const auto path = write_file("reversed.safetensors",
                               R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", 4);
  const std::string message = refusal(path);
  EXPECT_NE(message.find("tensor 'a' has data_offsets [8, 0] that end before they begin"), std::string::npos) << message;
  EXPECT_EQ(message.find("truncated"), std::string::npos) << message;
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

// A Hugging Face checkpoint in a dtype zerotrain does not read (F64 here) names the tensor and the
// dtypes it does read; a BF16 one reads as fp32 values.
TEST(SafetensorsReader, WeightsInAnUnreadDtypeAreRefusedByName) {
  const auto path = write_file("f64.safetensors", R"({"w": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}})", 4);
  SafetensorsReader reader(path);
  try {
    reader.read_f32("w");
    FAIL() << "an F64 tensor was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'w' has dtype F64; only F32, F16 and BF16 weights can be loaded"),
              std::string::npos)
        << e.what();
  }
}

TEST(SafetensorsReader, Bf16WeightsReadAsFloats) {
  // 0x3f80 is bf16 1.0, 0xc000 is -2.0: two of them in the bytes of one float.
  const std::filesystem::path path = std::filesystem::path(testing::TempDir()) / "bf16.safetensors";
  const std::string header = R"({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})";
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t size = header.size();
  const std::uint16_t values[2] = {0x3f80, 0xc000};
  out.write(reinterpret_cast<const char*>(&size), sizeof size);
  out << header;
  out.write(reinterpret_cast<const char*>(values), sizeof values);
  out.close();
  EXPECT_EQ(SafetensorsReader(path).read_f32("w"), (std::vector<float>{1.0f, -2.0f}));
}

}  // namespace
}  // namespace zt::interop
