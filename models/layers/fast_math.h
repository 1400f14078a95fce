// Building blocks of the fast CPU kernels: exp and tanh written as plain arithmetic so that the
// compiler vectorises the loops that call them (std::exp / std::tanh are library calls it cannot
// vectorise), and the attribute that compiles a kernel for AVX2 and AVX-512 beside the
// portable x86-64 baseline, chosen at load time from the CPU (GCC function multi-versioning).
// The files using them are compiled with -O3 -fno-math-errno -fno-trapping-math (models/CMakeLists.txt):
// flags that let loops vectorise without changing any result, unlike -ffast-math.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "runtime/core/compute_threads.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZT_CPU_KERNEL __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define ZT_CPU_KERNEL
#endif

namespace zt::models::cpu::fast {

// e^x for x in float range, relative error < 2e-7 (Cephes' expf polynomial): x = n ln2 + r with
// |r| <= ln2 / 2, e^r by a degree-6 polynomial, 2^n by writing the exponent bits. Inputs below
// -87.3 give ~1e-38 instead of 0 (never a denormal); above 88.7 give ~3e38.
[[gnu::always_inline]] inline float exp(float x) {
  x = x < -87.3f ? -87.3f : x;
  x = x > 88.7f ? 88.7f : x;
  float n = std::floor(x * 1.44269504088896341f + 0.5f);
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

// The number of threads the element-wise kernels use (cpu::set_compute_threads sets it).
inline int compute_threads() { return zt::compute_threads(); }

// Runs f(thread, begin, end) on every compute thread, [begin, end) its even share of [0, n).
template <typename F>
void for_chunks_indexed(std::size_t n, F&& f) {
#if defined(_OPENMP)
#pragma omp parallel num_threads(compute_threads())
  {
    const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t nt = static_cast<std::size_t>(omp_get_num_threads());
    f(t, n * t / nt, n * (t + 1) / nt);
  }
#else
  f(std::size_t{0}, std::size_t{0}, n);
#endif
}

// Runs f(begin, end) over [0, n) split evenly between the compute threads (see
// cpu::set_compute_threads), or over all of it on the calling thread when n is below min_parallel
// or there is one thread: below a few ten thousand elements a parallel region costs more than it
// saves. f is typically a ZT_CPU_KERNEL function, so each thread runs the vectorised clone.
template <typename F>
void for_chunks(std::size_t n, std::size_t min_parallel, F&& f) {
#if defined(_OPENMP)
  if (n >= min_parallel && compute_threads() > 1) {
#pragma omp parallel num_threads(compute_threads())
    {
      const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
      const std::size_t nt = static_cast<std::size_t>(omp_get_num_threads());
      f(n * t / nt, n * (t + 1) / nt);
    }
    return;
  }
#endif
  (void)min_parallel;
  f(std::size_t{0}, n);
}

}  // namespace zt::models::cpu::fast
