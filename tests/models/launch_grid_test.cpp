// The CUDA kernels' grid sizes (models/cuda/launch_grid.h), checked without a GPU: within CUDA's
// limits and never empty, at the shapes the models reach (QK-norm's B * T * heads rows included).
#include <gtest/gtest.h>

#include <cstdint>

#include "models/cuda/flash_attention_rules.h"
#include "models/cuda/launch_grid.h"

namespace zt::models::cuda {
namespace {

constexpr int kRowsPerChunk = 64;  // the norms' column reductions (layernorm.cu, rmsnorm.cu)

TEST(LaunchGrid, ZeroRowsLaunchOneBlockNotAnEmptyGrid) {
  EXPECT_EQ(row_blocks(0, 8), 1u);
  EXPECT_EQ(blocks_for(0, 256), 1u);
  EXPECT_EQ(chunk_grid_y(0), 1u);
}

TEST(LaunchGrid, RowsAreCoveredExactly) {
  for (int rows : {1, 7, 8, 9, 1000, 65536}) {
    const unsigned blocks = row_blocks(rows, 8);
    EXPECT_GE(static_cast<std::int64_t>(blocks) * 8, rows) << rows;
    EXPECT_LT(static_cast<std::int64_t>(blocks - 1) * 8, rows) << rows;
  }
}

TEST(LaunchGrid, QkNormRowsOfLongSequencesStayWithinGridLimits) {
  // Qwen3-style QK-norm normalises every head of every token: B * T * heads rows.
  struct Shape { int B, T, heads; };
  for (Shape s : {Shape{16, 1024, 12}, Shape{8, 8192, 32}, Shape{16, 8192, 64}}) {
    const int rows = s.B * s.T * s.heads;
    const int chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
    EXPECT_LE(row_blocks(rows, 8), kMaxGridX) << rows;
    const unsigned y = chunk_grid_y(chunks);
    EXPECT_GE(y, 1u);
    EXPECT_LE(y, kMaxGridY) << rows << " rows, " << chunks << " chunks";
    // Blocks stride over the chunks by gridDim.y: ceil(chunks / y) chunks each covers them all.
    const std::int64_t per_block = (chunks + y - 1) / y;
    EXPECT_GE(per_block * y, chunks);
  }
  // The shape that needed the stride: more chunks than gridDim.y can hold.
  EXPECT_GT((16 * 8192 * 64 + kRowsPerChunk - 1) / kRowsPerChunk, static_cast<int>(kMaxGridY));
}

// The flash attention kernels take 16-bit storage with hs 64 and 16-byte aligned rows; the rest
// take the materialised path (models/ops/attention.cu asks this before launching them).
TEST(FlashAttentionRules, TakesSixteenBitHeadSize64AlignedOnly) {
  EXPECT_TRUE(flash_attention_supported(DType::bf16, 64, 8));
  EXPECT_TRUE(flash_attention_supported(DType::f16, 64, 16));
  EXPECT_FALSE(flash_attention_supported(DType::f32, 64, 8));   // fp32 runs keep TF32 products
  EXPECT_FALSE(flash_attention_supported(DType::bf16, 128, 8));  // written for hs 64
  EXPECT_FALSE(flash_attention_supported(DType::bf16, 16, 8));
  EXPECT_FALSE(flash_attention_supported(DType::bf16, 64, 4));   // rows not 16-byte aligned
}

TEST(FlashAttentionRules, OneBlockPerTileOfEveryHeadAndStatisticsPerRow) {
  // GPT-2 124M at T 1024 and a partial last tile; the forward and dq kernels walk tiles from the
  // last one (blockIdx.y = 0) back, so the grid must hold every tile exactly.
  struct Shape { int bh, T; unsigned tiles; };
  for (Shape s : {Shape{16 * 12, 1024, 16}, Shape{8 * 2, 100, 2}, Shape{1, 1, 1}, Shape{2, 64, 1}, Shape{2, 65, 2}}) {
    const FlashGrid g = flash_attention_grid(s.bh, s.T);
    EXPECT_EQ(g.x, static_cast<unsigned>(s.bh));
    EXPECT_EQ(g.y, s.tiles) << "T " << s.T;
  }
  EXPECT_EQ(flash_attention_stats_floats(16, 12, 1024), 16 * 12 * 1024);
  // The statistics live in att's (B, NH, T, T) 16-bit elements: two per float, so T >= 2 fits.
  EXPECT_LE(2 * flash_attention_stats_floats(16, 12, 1024), std::int64_t{16} * 12 * 1024 * 1024);
}

}  // namespace
}  // namespace zt::models::cuda
