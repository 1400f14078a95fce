// Element types of buffers and their conversions on the CPU.
//
// bf16 and f16 are stored as raw 16-bit patterns. Conversions from f32 round to nearest, ties to
// even, like the hardware conversions on the GPU, so the CPU and CUDA paths agree bit for bit.
// i32 holds integers (token ids, targets): copied as they are, never converted to or from a float
// type (convert_host throws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace zt {

enum class DType : std::uint8_t { f32, bf16, f16, i32 };

std::size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);
// Parses "f32"/"fp32"/"float32", "bf16"/"bfloat16", "f16"/"fp16"/"float16"; throws on anything else.
DType parse_dtype(std::string_view name);

struct bf16 {
  std::uint16_t bits;
};
struct f16 {
  std::uint16_t bits;
};

bf16 float_to_bf16(float value);
float bf16_to_float(bf16 value);
f16 float_to_f16(float value);
float f16_to_float(f16 value);

// The DType of a C++ element type, for typed access to buffers.
template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<bf16>() { return DType::bf16; }
template <> constexpr DType dtype_of<f16>() { return DType::f16; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::i32; }

// Converts n elements between host arrays of any two float dtypes (same dtype, i32 included: a
// plain copy). Throws std::invalid_argument for a conversion to or from i32.
void convert_host(const void* src, DType src_dtype, void* dst, DType dst_dtype, std::size_t n);

}  // namespace zt
