#include "core/host_arith.h"

#include <algorithm>
#include <stdexcept>

#include "core/vector_clones.h"

namespace zt {

ZT_VECTOR_CLONES void add_into(float* __restrict acc, const float* __restrict x, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) acc[i] += x[i];
}

void accumulate_into(float* acc, const void* x, DType x_dtype, std::size_t n) {
  if (x_dtype == DType::f32) return add_into(acc, static_cast<const float*>(x), n);
  if (x_dtype == DType::i32) throw std::invalid_argument("accumulate: an i32 buffer has no float values");
  // 16-bit: widened a chunk at a time (a stack buffer that stays in L1), then added.
  constexpr std::size_t kChunk = 1024;
  float widened[kChunk];
  const auto* from = static_cast<const std::uint16_t*>(x);
  for (std::size_t at = 0; at < n; at += kChunk) {
    const std::size_t count = std::min(kChunk, n - at);
    convert_host(from + at, x_dtype, widened, DType::f32, count);
    add_into(acc + at, widened, count);
  }
}

ZT_VECTOR_CLONES void divide_by(float* x, float divisor, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) x[i] /= divisor;
}

}  // namespace zt
