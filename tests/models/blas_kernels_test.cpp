// Choosing OpenBLAS's kernel family from the CPU flags (models/cpu/blas_kernels.h), and that this
// test process's sgemm rate measurement is sane. That the zerotrain binary really runs the fast
// family however it is started is checked by blas_family_test.sh.
#include <gtest/gtest.h>

#include "models/cpu/blas_kernels.h"

namespace zt::models::cpu {
namespace {

constexpr const char* kAvx512 = "fpu sse2 avx avx2 fma avx512f avx512dq avx512bw avx512vl";
constexpr const char* kAvx2 = "fpu sse2 sse4_2 avx avx2 fma bmi2";
constexpr const char* kSse = "fpu sse2 sse4_2";

TEST(BlasKernels, CoretypeFromCpuFlags) {
  EXPECT_EQ(coretype_for_cpu_flags(kAvx512), "SkylakeX");
  EXPECT_EQ(coretype_for_cpu_flags(kAvx2), "Haswell");
  EXPECT_EQ(coretype_for_cpu_flags(kSse), "");
  EXPECT_EQ(coretype_for_cpu_flags("avx2"), "") << "AVX2 without FMA has no Haswell kernels";
  EXPECT_EQ(coretype_for_cpu_flags("avx512f avx2 fma"), "Haswell") << "AVX-512 F alone is not SkylakeX";
  EXPECT_EQ(coretype_for_cpu_flags("xavx2 fmax"), "") << "whole flags only";
}

TEST(BlasKernels, ReplacesOnlySlowerFamilies) {
  // A CPU the library does not know gets generic kernels: replace them.
  EXPECT_EQ(better_coretype(kAvx512, "Prescott"), "SkylakeX");
  EXPECT_EQ(better_coretype(kAvx512, "Haswell"), "SkylakeX");
  EXPECT_EQ(better_coretype(kAvx2, "Nehalem"), "Haswell");
  // Already the widest kernels: nothing to do (no re-execution).
  EXPECT_EQ(better_coretype(kAvx512, "SkylakeX"), "");
  EXPECT_EQ(better_coretype(kAvx512, "Cooperlake"), "");
  EXPECT_EQ(better_coretype(kAvx2, "Zen"), "");
  EXPECT_EQ(better_coretype(kAvx2, "Haswell"), "");
  // Nothing better exists for an SSE-only CPU.
  EXPECT_EQ(better_coretype(kSse, "Prescott"), "");
}

TEST(BlasKernels, ThisProcessReportsItsFamilyAndAPositiveRate) {
  EXPECT_FALSE(blas_core_name().empty());
  EXPECT_NE(blas_config().find("OpenBLAS"), std::string::npos);
  const double gflops = measure_sgemm_gflops(64, 48, 32, 0.0);
  EXPECT_GT(gflops, 0.01);
  EXPECT_LT(gflops, 1e6);
}

}  // namespace
}  // namespace zt::models::cpu
