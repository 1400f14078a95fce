// What every op shares: the index that groups a batch's positions by token (for the embedding
// backwards on the GPU), views of integer data, and the copies and fills of the compute stream.
//
// An op is one file set in this folder (docs/howto.md): <op>.h holds its contract (shapes,
// which outputs are overwritten and which accumulated), the call on a ComputeContext and its CPU
// implementation; <op>.cpp checks the views, runs the CPU implementation or hands the call to
// the CUDA one (on_cuda::, in <op>.cu); models/no_cuda.cpp answers on_cuda:: in a build without
// CUDA. No code above the ops knows which device it runs on.
//
// Integer tensors (tokens, targets, the token index) are i32 views; int32_view() reads them.
#pragma once

#include <cstdint>

#include "core/buffer.h"
#include "models/compute_context.h"

namespace zt::models::ops {

std::int32_t* int32_view(const BufferView& view);

// Sorted-by-token index of one batch, built on the host, that lets the GPU embedding backward
// sum each token's rows in a fixed order (deterministic, no atomics). Ignored on the CPU.
struct TokenIndex {
  BufferView positions;  // (B*T) int32: positions grouped by token, ascending within a group
  BufferView starts;     // (groups + 1) int32: group g is positions[starts[g] .. starts[g+1])
  BufferView tokens;     // (groups) int32: the token of each group
  int groups = 0;
};

void copy(ComputeContext& ctx, BufferView dst, BufferView src);
void fill_zero(ComputeContext& ctx, BufferView dst);

}  // namespace zt::models::ops
