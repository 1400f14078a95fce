// CUDA kernels behind zero/device_ops.h.
#pragma once

#include <cuda_runtime.h>

#include "runtime/core/buffer.h"

namespace zt::zero_ops::cuda {

void convert_copy(BufferView dst, BufferView src, cudaStream_t stream);
void accumulate(BufferView dst, BufferView src, cudaStream_t stream);

}  // namespace zt::zero_ops::cuda
