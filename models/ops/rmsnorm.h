// RMSNorm over the last dimension (CPU reference, fp32), as in Llama and Hugging Face's
// LlamaRMSNorm: out = weight * x / sqrt(mean(x^2) + eps). No mean subtraction, no bias.
//
// Rows need not be contiguous: with RowGroups{group, stride}, row r starts at element
// (r / group) * stride + (r % group) * C, which lets the same code normalise every head of the
// query and key parts of a fused qkv row (QK-norm) without copying them out.
#pragma once

#include <cstddef>

#include "models/ops/common.h"

namespace zt::models::cpu {

struct RowGroups {
  int group = 1;           // consecutive rows of length C that sit side by side
  std::size_t stride = 0;  // elements from one group to the next; 0 = group * C (contiguous rows)

  std::size_t offset(int row, int C) const {
    std::size_t s = stride ? stride : static_cast<std::size_t>(group) * C;
    return static_cast<std::size_t>(row / group) * s + static_cast<std::size_t>(row % group) * C;
  }
};

// inp rows (rows, C), weight (C) -> out rows (same offsets as inp), rstd (rows) = 1/sqrt(mean(x^2)+eps).
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int rows, int C, float eps,
                     RowGroups groups = {});
// dout rows -> dinp rows (+= when accumulate, else overwritten; dinp may alias dout when not
// accumulating), dweight (C) +=.
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                      const float* rstd, int rows, int C, RowGroups groups, bool accumulate);

}  // namespace zt::models::cpu

namespace zt::models::ops {

using cpu::RowGroups;

// On a context's views: rstd f32 (rows), rows placed as RowGroups says (contiguous by default).
void rmsnorm_forward(ComputeContext& ctx, BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows,
                     int C, float eps, RowGroups groups = {});
void rmsnorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                      BufferView weight, BufferView rstd, int rows, int C, RowGroups groups, bool accumulate);

// The op on a CUDA context (rmsnorm.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void rmsnorm_forward(ComputeContext& ctx, BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows,
                     int C, float eps, RowGroups groups);
void rmsnorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                      BufferView weight, BufferView rstd, int rows, int C, RowGroups groups, bool accumulate);
}  // namespace on_cuda

}  // namespace zt::models::ops
