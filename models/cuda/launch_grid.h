// Grid sizes of the CUDA kernels' launches, in plain C++ so that the CPU tests check them
// (tests/models/launch_grid_test.cpp) on machines without a GPU. CUDA's limits: gridDim.x up to
// 2^31 - 1, gridDim.y up to 65535, and every dimension at least 1 (an empty grid is a launch
// error, so kernels over zero rows launch one block that does nothing).
#pragma once

#include <algorithm>
#include <cstddef>

namespace zt::models::cuda {

inline constexpr unsigned kMaxGridX = 2147483647u;
inline constexpr unsigned kMaxGridY = 65535u;

// Blocks of `threads` threads covering n elements, one thread an element.
inline unsigned blocks_for(std::size_t n, unsigned threads) {
  return static_cast<unsigned>(n == 0 ? 1 : (n + threads - 1) / threads);
}

// Blocks covering `rows` rows at rows_per_block rows a block (a warp a row, say).
inline unsigned row_blocks(int rows, int rows_per_block) {
  return static_cast<unsigned>(std::max(1, (rows + rows_per_block - 1) / rows_per_block));
}

// gridDim.y of a column reduction over `chunks` row chunks: a reduction over more chunks than
// gridDim.y allows gives each block several chunks, striding by gridDim.y (more than 4.2 M rows at
// 64 rows a chunk: QK-norm's B * T * heads rows reach that).
inline unsigned chunk_grid_y(int chunks) { return static_cast<unsigned>(std::clamp(chunks, 1, 65535)); }

}  // namespace zt::models::cuda
