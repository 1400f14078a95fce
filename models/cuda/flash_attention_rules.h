// The flash attention kernels' rules in plain C++ (models/cuda/flash_attention.h), so that the
// CPU tests check them on machines without a GPU: which cases the kernels take, how much memory
// they need beside their inputs, and their grids.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "models/cuda/launch_grid.h"

namespace zt::models::cuda {

// Where element (b, h, t, d) of a tensor of heads lies: base + b*batch + h*head + t*row + d,
// strides in elements. Heads split out as (B, NH, T, hs) and heads inside the rows of a fused
// (B, T, 3C) qkv tensor are both this, so the kernels read and write either without a permute.
struct HeadsLayout {
  std::int64_t batch = 0, head = 0, row = 0;
};

struct FlashAttention {
  int B = 0, NH = 0, T = 0;
  int group = 1;  // query heads per key/value head (grouped-query attention); 1 for GPT-2
  HeadsLayout q, k, v, y;
};

inline constexpr int kFlashHeadSize = 64;  // hs the kernels are written for
inline constexpr int kFlashTile = 64;      // query rows and key columns a block takes at a time

// 16-bit storage (the tensor cores' bf16/f16 products), hs 64, and every base and stride a
// multiple of 8 elements (the tiles are loaded 16 bytes at a time).
inline bool flash_attention_supported(DType dt, int hs, std::int64_t alignment_elements) {
  return (dt == DType::bf16 || dt == DType::f16) && hs == kFlashHeadSize && alignment_elements % 8 == 0;
}

// The attention shapes the kernels take, given 16-byte aligned views: flash_attention_supported's
// dtype and head size (every row width a multiple of hs is then a multiple of 8 elements), a float
// of statistics per (b, h, t) in att's 16-bit elements (T >= 2), and T within the grid's tiles.
inline bool flash_attention_takes(DType dt, int B, int T, int NH, int hs) {
  return B >= 1 && NH >= 1 && T >= 2 && flash_attention_supported(dt, hs, 8) &&
         static_cast<std::int64_t>(T) <= static_cast<std::int64_t>(kMaxGridY) * kFlashTile;
}

// Row statistics forward saves for backward: one float per (b, h, t), the row's log-sum-exp of
// the scaled scores in base 2 (m + log2(l) with the scores times log2(e) / sqrt(hs)).
inline std::int64_t flash_attention_stats_floats(int B, int NH, int T) {
  return static_cast<std::int64_t>(B) * NH * T;
}
// Backward's scratch: rowsum(dy * y) per (b, h, t).
inline std::int64_t flash_attention_scratch_floats(int B, int NH, int T) { return flash_attention_stats_floats(B, NH, T); }
// Elements of dtype that hold `floats` floats: the activations and scratch are views of the
// compute dtype, the statistics fp32.
inline std::size_t elements_for_floats(std::int64_t floats, DType dtype) {
  const auto element = static_cast<std::int64_t>(dtype_size(dtype));
  return static_cast<std::size_t>((floats * 4 + element - 1) / element);
}

// Grid of the flash kernels: x over (batch, head) pairs (forward, dq) or (batch, key/value head)
// pairs (dk, dv), y over the 64-row tiles of T.
struct FlashGrid {
  unsigned x = 1, y = 1;
};
inline FlashGrid flash_attention_grid(int batch_heads, int T) {
  return {row_blocks(batch_heads, 1), std::min(kMaxGridY, row_blocks(T, kFlashTile))};
}

}  // namespace zt::models::cuda
