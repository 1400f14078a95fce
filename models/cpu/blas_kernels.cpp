#include "models/cpu/blas_kernels.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace zt::models::cpu {

namespace {

bool has_flags(std::string_view flags, std::initializer_list<std::string_view> wanted) {
  const std::string padded = " " + std::string(flags) + " ";
  for (std::string_view flag : wanted)
    if (padded.find(" " + std::string(flag) + " ") == std::string::npos) return false;
  return true;
}

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (name == n) return true;
  return false;
}

}  // namespace

std::string blas_core_name() { return openblas_get_corename(); }
std::string blas_config() { return openblas_get_config(); }

std::string coretype_for_cpu_flags(std::string_view flags) {
  if (has_flags(flags, {"avx512f", "avx512bw", "avx512vl", "avx512dq"})) return "SkylakeX";
  if (has_flags(flags, {"avx2", "fma"})) return "Haswell";
  return "";
}

std::string better_coretype(std::string_view flags, std::string_view loaded) {
  const std::string wanted = coretype_for_cpu_flags(flags);
  if (wanted == "SkylakeX" && one_of(loaded, {"SkylakeX", "Cooperlake", "SapphireRapids"})) return "";
  if (wanted == "Haswell" && one_of(loaded, {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"})) return "";
  return wanted;
}

std::string cpu_flags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      const std::size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(colon + 1);
    }
  return "";
}

double measure_sgemm_gflops(int M, int N, int K, double min_seconds) {
  using Clock = std::chrono::steady_clock;
  std::vector<float> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(N) * K),
      c(static_cast<std::size_t>(M) * N);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 13) * 0.01f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 7) * 0.01f;
  auto product = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.data(), K, b.data(), K, 0.0f, c.data(), N);
  };
  product();
  double best = 1e30;
  const auto start = Clock::now();
  for (int i = 0; i < 3 || std::chrono::duration<double>(Clock::now() - start).count() < min_seconds; ++i) {
    const auto t0 = Clock::now();
    product();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return 2.0 * M * N * K / best / 1e9;
}

void ensure_fast_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice, or our own after the re-exec
  const std::string wanted = better_coretype(cpu_flags(), blas_core_name());
  if (wanted.empty()) return;
  setenv("OPENBLAS_CORETYPE", wanted.c_str(), 1);
  // Tells the re-executed process what it replaced, for its debug log line.
  setenv("ZT_OPENBLAS_CORETYPE_REPLACED", blas_core_name().c_str(), 1);
  execv("/proc/self/exe", argv);
  std::cerr << "zerotrain: warning: could not re-execute with OPENBLAS_CORETYPE=" << wanted << " ("
            << std::strerror(errno) << "); running with OpenBLAS's " << blas_core_name() << " kernels\n";
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("ZT_OPENBLAS_CORETYPE_REPLACED");
}

}  // namespace zt::models::cpu
