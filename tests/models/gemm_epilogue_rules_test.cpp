// When a product takes a cuBLASLt epilogue (models/cuda/gemm_epilogue_rules.h), checked without
// a GPU: the model's products in 16-bit storage do, fp32 and misaligned views keep the separate
// kernels.
#include <gtest/gtest.h>

#include <cstddef>

#include "models/cuda/gemm_epilogue_rules.h"

namespace zt::models::cuda {
namespace {

alignas(16) std::byte memory[256];

TEST(GemmEpilogueRules, SixteenBitAlignedProductsTakeThem) {
  const void* a = memory;
  const void* b = memory + 64;
  // GPT-2 124M's c_fc: inp (N, 768), weight (3072, 768), out and pre (N, 3072).
  EXPECT_TRUE(gemm_epilogue_applies(DType::bf16, {a, b, a, b}, {768, 768, 3072, 3072}));
  EXPECT_TRUE(gemm_epilogue_applies(DType::f16, {a, b}, {768, 768, 3072}));
  EXPECT_TRUE(gemm_epilogue_applies(DType::bf16, {a, nullptr}, {64}));  // no bias: a null pointer is aligned
}

TEST(GemmEpilogueRules, Fp32AndMisalignedViewsKeepTheSeparateKernels) {
  const void* a = memory;
  EXPECT_FALSE(gemm_epilogue_applies(DType::f32, {a}, {768}));
  EXPECT_FALSE(gemm_epilogue_applies(DType::i32, {a}, {768}));
  EXPECT_FALSE(gemm_epilogue_applies(DType::bf16, {a, memory + 2}, {768}));  // one bf16 element in
  EXPECT_FALSE(gemm_epilogue_applies(DType::bf16, {a}, {768, 100}));         // a row of 100 elements
  EXPECT_FALSE(gemm_epilogue_applies(DType::bf16, {a}, {0}));
}

}  // namespace
}  // namespace zt::models::cuda
