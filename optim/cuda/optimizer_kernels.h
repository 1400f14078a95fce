// CUDA kernels behind optim/optimizer_ops.h, launched on stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "optim/adamw.h"

namespace zt::cuda {

void adamw_step(const AdamWStep& args, cudaStream_t stream);
// The sum of squares of grad into *partial; scratch: step_stats_scratch_numel() floats.
void sum_of_squares(const float* grad, std::size_t count, double* partial, float* scratch, cudaStream_t stream);
// stats: the step_stats layout (optimizer_ops.h), from n partials.
void finish_step_stats(const double* partials, std::size_t n, float* stats, int micro_batches, cudaStream_t stream);

}  // namespace zt::cuda
