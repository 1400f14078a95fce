// CUDA kernels behind the element-wise device ops (core/device_ops.h), launched on stream.
#pragma once

#include <cuda_runtime.h>

#include "core/buffer.h"

namespace zt::cuda {

// dst[i] = src[i] converted to dst's dtype (round to nearest even). Same element count.
void convert_copy(BufferView dst, BufferView src, cudaStream_t stream);
// dst[i] += src[i] converted to f32. dst is f32.
void accumulate(BufferView dst, BufferView src, cudaStream_t stream);

}  // namespace zt::cuda
