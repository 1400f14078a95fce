// convert_host: the bulk conversions between f32 and the 16-bit types that mixed precision runs
// on every op of every step (the CPU ops widen their 16-bit views and round their results), so
// they are written to vectorize. Each loop is branch-free per element (a NaN is a select, not a
// branch) under `omp simd`, built for the widest vector unit the CPU has (vector_clones.h). f16
// goes through the F16C instructions where the CPU has them: they round to nearest even and handle
// subnormals, infinities and NaNs as float_to_f16 and f16_to_float do, which dtype_test checks
// over every f16 value and a sweep of f32 values.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/bf16_bits.h"
#include "core/dtype.h"
#include "core/vector_clones.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ZT_HAVE_F16C_PATH 1
#else
#define ZT_HAVE_F16C_PATH 0
#endif

namespace zt {
namespace {

ZT_VECTOR_CLONES void f32_to_bf16(const float* src, std::uint16_t* dst, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) dst[i] = float_to_bf16_bits(src[i]);
}

ZT_VECTOR_CLONES void bf16_to_f32(const std::uint16_t* src, float* dst, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) dst[i] = bf16_bits_to_float(src[i]);
}

#if ZT_HAVE_F16C_PATH
bool cpu_has_f16c() {
  static const bool has = __builtin_cpu_supports("f16c");
  return has;
}

__attribute__((target("f16c"))) void f32_to_f16_f16c(const float* src, std::uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i packed = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), packed);
  }
  for (; i < n; ++i) dst[i] = float_to_f16(src[i]).bits;
}

__attribute__((target("f16c"))) void f16_to_f32_f16c(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = f16_to_float(f16{src[i]});
}
#endif

void f32_to_f16(const float* src, std::uint16_t* dst, std::size_t n) {
#if ZT_HAVE_F16C_PATH
  if (cpu_has_f16c()) return f32_to_f16_f16c(src, dst, n);
#endif
  for (std::size_t i = 0; i < n; ++i) dst[i] = float_to_f16(src[i]).bits;
}

void f16_to_f32(const std::uint16_t* src, float* dst, std::size_t n) {
#if ZT_HAVE_F16C_PATH
  if (cpu_has_f16c()) return f16_to_f32_f16c(src, dst, n);
#endif
  for (std::size_t i = 0; i < n; ++i) dst[i] = f16_to_float(f16{src[i]});
}

void widen(const void* src, DType dtype, float* dst, std::size_t n) {
  const auto* bits = static_cast<const std::uint16_t*>(src);
  if (dtype == DType::f32) std::memcpy(dst, src, n * sizeof(float));
  else if (dtype == DType::bf16) bf16_to_f32(bits, dst, n);
  else f16_to_f32(bits, dst, n);
}

void narrow(const float* src, void* dst, DType dtype, std::size_t n) {
  auto* bits = static_cast<std::uint16_t*>(dst);
  if (dtype == DType::f32) std::memcpy(dst, src, n * sizeof(float));
  else if (dtype == DType::bf16) f32_to_bf16(src, bits, n);
  else f32_to_f16(src, bits, n);
}

}  // namespace

void convert_host(const void* src, DType src_dtype, void* dst, DType dst_dtype, std::size_t n) {
  if (src_dtype == dst_dtype) {
    if (n) std::memmove(dst, src, n * dtype_size(src_dtype));
    return;
  }
  if (src_dtype == DType::i32 || dst_dtype == DType::i32)
    throw std::invalid_argument("convert_host: integers (i32) are copied, not converted to or from " +
                                std::string(dtype_name(src_dtype == DType::i32 ? dst_dtype : src_dtype)));
  if (src_dtype == DType::f32) return narrow(static_cast<const float*>(src), dst, dst_dtype, n);
  if (dst_dtype == DType::f32) return widen(src, src_dtype, static_cast<float*>(dst), n);
  // bf16 <-> f16: through f32 in chunks (exact: f32 holds every value of both types).
  float chunk[1024];
  const auto* from = static_cast<const std::uint16_t*>(src);
  auto* to = static_cast<std::uint16_t*>(dst);
  for (std::size_t at = 0; at < n; at += 1024) {
    std::size_t count = std::min<std::size_t>(1024, n - at);
    widen(from + at, src_dtype, chunk, count);
    narrow(chunk, to + at, dst_dtype, count);
  }
}

}  // namespace zt
