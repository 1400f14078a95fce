// Which OpenBLAS kernel family this process runs, and getting the fast one for this CPU however
// zerotrain was started.
//
// Debian's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels from the CPU model when the library
// loads; on CPUs newer than the library it falls back to generic SSE kernels, 1.2x to 2.3x slower
// on our GPT-2 products. OPENBLAS_CORETYPE overrides the choice but is read only at load time,
// before main(). So main() calls ensure_fast_blas_kernels() first: when the user has not set the
// variable and the loaded family is slower than the CPU's flags allow, it sets the variable and
// re-executes the same binary with the same arguments (execv keeps the process id, the
// environment and the MPI/PMIx launch state, and nothing has touched MPI yet). The re-executed
// process finds the variable set and goes on, so it happens at most once.
#pragma once

#include <string>
#include <string_view>

namespace zt::models::cpu {

// The family OpenBLAS loaded ("Haswell", "SkylakeX", "Zen", "Prescott", ...) and its build line.
std::string blas_core_name();
std::string blas_config();

// The OPENBLAS_CORETYPE a CPU with these /proc/cpuinfo flags should run: "SkylakeX" with
// AVX-512 (F, BW, VL, DQ), "Haswell" with AVX2 and FMA, "" when the generic kernels are all it has.
std::string coretype_for_cpu_flags(std::string_view flags);

// The family to request instead of `loaded` on a CPU with `flags`, or "" when `loaded` already
// uses the CPU's widest vector kernels (Zen and Haswell are the same AVX2 kernels).
std::string better_coretype(std::string_view flags, std::string_view loaded);

// The flags line of /proc/cpuinfo ("" when it cannot be read).
std::string cpu_flags();

// The sgemm rate (GFLOP/s) of C (M, N) = A (M, K) B^T (K, N) on this process's BLAS threads, as
// the Linear layers call it: one warm-up product, then products until min_seconds have passed
// (at least 3); the best of them, so that a moment of contention from other processes does not
// lower the ceiling MFU is measured against.
double measure_sgemm_gflops(int M, int N, int K, double min_seconds);

// See the top of this file. Returns when nothing needs to change (or the re-execution failed,
// which leaves the slower kernels and a warning on stderr); otherwise does not return.
void ensure_fast_blas_kernels(char** argv);

}  // namespace zt::models::cpu
