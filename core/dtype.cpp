#include "core/dtype.h"

#include <bit>
#include <stdexcept>
#include <string>

namespace zt {

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::bf16: return 2;
    case DType::f16: return 2;
    case DType::i32: return 4;
  }
  throw std::logic_error("unknown dtype");
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
    case DType::i32: return "i32";
  }
  throw std::logic_error("unknown dtype");
}

DType parse_dtype(std::string_view name) {
  if (name == "f32" || name == "fp32" || name == "float32") return DType::f32;
  if (name == "bf16" || name == "bfloat16") return DType::bf16;
  if (name == "f16" || name == "fp16" || name == "float16") return DType::f16;
  throw std::invalid_argument("unknown dtype '" + std::string(name) + "' (expected f32, bf16 or f16)");
}

bf16 float_to_bf16(float value) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    // NaN: keep the sign and the top payload bits, force it quiet so truncation cannot make it inf.
    return bf16{static_cast<std::uint16_t>((bits >> 16) | 0x0040u)};
  }
  std::uint32_t rounding_bias = 0x7fffu + ((bits >> 16) & 1u);
  return bf16{static_cast<std::uint16_t>((bits + rounding_bias) >> 16)};
}

float bf16_to_float(bf16 value) { return std::bit_cast<float>(static_cast<std::uint32_t>(value.bits) << 16); }

f16 float_to_f16(float value) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return f16{static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu))};
  if (abs >= 0x477ff000u) return f16{static_cast<std::uint16_t>(sign | 0x7c00u)};  // rounds to >= 65520: inf
  int exponent = static_cast<int>(abs >> 23) - 127;
  if (exponent >= -14) {
    // Normal f16: rebias the exponent, round the 23-bit mantissa to 10 bits.
    std::uint32_t half = abs - ((127u - 15u) << 23);
    std::uint32_t rounded = half + 0xfffu + ((half >> 13) & 1u);
    return f16{static_cast<std::uint16_t>(sign | (rounded >> 13))};
  }
  if (exponent < -25) return f16{sign};  // below half the smallest subnormal: rounds to zero
  // Subnormal f16: value = m * 2^-24 with m < 1024; shift the full significand and round.
  std::uint32_t significand = (abs & 0x7fffffu) | 0x800000u;
  int shift = -exponent - 1;  // 14..24 places, so that the unit is 2^-24
  std::uint32_t m = significand >> shift;
  std::uint32_t rest = significand & ((1u << shift) - 1u);
  std::uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (m & 1u))) ++m;
  return f16{static_cast<std::uint16_t>(sign | m)};
}

float f16_to_float(f16 value) {
  std::uint32_t sign = static_cast<std::uint32_t>(value.bits & 0x8000u) << 16;
  std::uint32_t exponent = (value.bits >> 10) & 0x1fu;
  std::uint32_t mantissa = value.bits & 0x3ffu;
  if (exponent == 0x1f) {  // infinity, or a NaN made quiet as the F16C conversion and float_to_f16 make it
    std::uint32_t quiet = mantissa ? 0x400000u : 0u;
    return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mantissa << 13));
  }
  if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // exact: subnormal or zero
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 127u - 15u) << 23) | (mantissa << 13));
}

}  // namespace zt
