#include "core/host_arith.h"

#include <algorithm>
#include <stdexcept>

#include "core/bf16_bits.h"
#include "core/vector_clones.h"

namespace zt {

ZT_VECTOR_CLONES void add_into(float* __restrict acc, const float* __restrict x, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) acc[i] += x[i];
}

namespace {
ZT_VECTOR_CLONES void accumulate_bf16(float* __restrict acc, const std::uint16_t* __restrict x, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) acc[i] += bf16_bits_to_float(x[i]);
}
}  // namespace

void accumulate_into(float* acc, const void* x, DType x_dtype, std::size_t n) {
  if (x_dtype == DType::f32) return add_into(acc, static_cast<const float*>(x), n);
  if (x_dtype == DType::bf16) return accumulate_bf16(acc, static_cast<const std::uint16_t*>(x), n);
  if (x_dtype == DType::i32) throw std::invalid_argument("accumulate: an i32 buffer has no float values");
  // f16: widened a chunk at a time (a stack buffer that stays in L1) through the F16C conversions.
  constexpr std::size_t kChunk = 1024;
  float widened[kChunk];
  const auto* from = static_cast<const std::uint16_t*>(x);
  for (std::size_t at = 0; at < n; at += kChunk) {
    const std::size_t count = std::min(kChunk, n - at);
    convert_host(from + at, x_dtype, widened, DType::f32, count);
    add_into(acc + at, widened, count);
  }
}

namespace {
// One pass: widened, added and rounded in registers (what the chunked path below does in three).
ZT_VECTOR_CLONES void add_rounded_bf16(std::uint16_t* __restrict acc, const std::uint16_t* __restrict x,
                                       std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) acc[i] = float_to_bf16_bits(bf16_bits_to_float(acc[i]) + bf16_bits_to_float(x[i]));
}
}  // namespace

void add_rounded_16bit(std::uint16_t* acc, const std::uint16_t* x, DType dtype, std::size_t n) {
  if (dtype == DType::bf16) return add_rounded_bf16(acc, x, n);
  if (dtype != DType::f16) throw std::invalid_argument("add_rounded_16bit: the values must be bf16 or f16");
  // f16: widened a chunk at a time through the F16C conversions, added, rounded once.
  constexpr std::size_t kChunk = 1024;
  float a[kChunk], b[kChunk];
  for (std::size_t at = 0; at < n; at += kChunk) {
    const std::size_t count = std::min(kChunk, n - at);
    convert_host(x + at, dtype, a, DType::f32, count);
    convert_host(acc + at, dtype, b, DType::f32, count);
    add_into(b, a, count);
    convert_host(b, DType::f32, acc + at, dtype, count);
  }
}

ZT_VECTOR_CLONES void divide_by(float* x, float divisor, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) x[i] /= divisor;
}

}  // namespace zt
