// bf16 <-> f32 on raw bits, branch-free (a NaN is a select), for the loops that `omp simd`
// vectorizes (dtype_convert.cpp, host_arith.cpp). The same results as float_to_bf16 and
// bf16_to_float: round to nearest, ties to even; a NaN stays a NaN.
#pragma once

#include <bit>
#include <cstdint>

namespace zt {

inline float bf16_bits_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

inline std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const std::uint32_t quiet_nan = (bits >> 16) | 0x0040u;  // as float_to_bf16: rounding could make it inf
  return static_cast<std::uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

}  // namespace zt
