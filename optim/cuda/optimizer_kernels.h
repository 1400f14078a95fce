// CUDA kernels behind optim/optimizer_ops.h, launched on stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "optim/adamw.h"

namespace zt::cuda {

void adamw_step(const AdamWStep& args, cudaStream_t stream);
// stats: the step_stats layout (optimizer_ops.h); scratch: step_stats_scratch_numel() floats.
void finish_step_stats(const float* grad, std::size_t count, float* stats, int micro_batches, float* scratch,
                       cudaStream_t stream);

}  // namespace zt::cuda
