// ZT_VECTOR_CLONES: build a loop function for AVX-512, AVX2 and the x86-64 baseline, so the loader
// picks the widest this CPU runs (GCC/Clang target_clones). For the host loops that run over whole
// gradients every step; their files are compiled with -fopenmp-simd (SIMD directives only, no
// OpenMP runtime) so `#pragma omp simd` vectorizes them.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ZT_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ZT_VECTOR_CLONES
#endif
