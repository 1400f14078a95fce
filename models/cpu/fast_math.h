// Building blocks of the fast CPU kernels: exp and tanh written as plain arithmetic so that the
// compiler vectorises the loops that call them (std::exp / std::tanh are library calls it cannot
// vectorise), and the attribute that compiles a kernel for AVX2 and AVX-512 beside the
// portable x86-64 baseline, chosen at load time from the CPU (GCC function multi-versioning).
// The files using them are compiled with -O3 -fno-math-errno -fno-trapping-math -fopenmp-simd
// (models/CMakeLists.txt): flags that let loops vectorise (`#pragma omp simd` reductions) without
// changing any result, unlike -ffast-math. They run on the calling thread: OpenMP threads beside
// OpenBLAS's own made steps up to 100x slower on a loaded 2-core machine (both pools spin-wait).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/cpu_kernel_choice.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZT_CPU_KERNEL __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define ZT_CPU_KERNEL
#endif

namespace zt::models::cpu::fast {

// e^x for x in float range, relative error < 2e-7 (Cephes' expf polynomial): x = n ln2 + r with
// |r| <= ln2 / 2, e^r by a degree-6 polynomial, 2^n by writing the exponent bits. Inputs below
// -87.3 give ~1e-38 instead of 0 (never a denormal); above about 88.4, +inf; NaN gives NaN.
[[gnu::always_inline]] inline float exp(float x) {
  x = x < -87.3f ? -87.3f : x;
  x = x > 88.7f ? 88.7f : x;
  float n = std::floor(x * 1.44269504088896341f + 0.5f);
  // A NaN passes both clamps; converting it to an integer would be undefined, so its exponent is
  // taken as 0 and the NaN goes on through the polynomial.
  n = n == n ? n : 0.0f;
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);  // (std::bit_cast stops GCC 12 vectorising the loop)
  return p * scale;
}

// tanh(u) = 1 - 2 / (e^{2u} + 1); absolute error < 3e-7 (what GELU needs: it multiplies by x).
[[gnu::always_inline]] inline float tanh(float u) { return 1.0f - 2.0f / (fast::exp(2.0f * u) + 1.0f); }

}  // namespace zt::models::cpu::fast
