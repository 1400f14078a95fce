// The few element-wise operations the ZeRO engine runs on its own buffers (gradient buckets,
// gradient shards), ordered on the compute stream of their device: the calling thread for a CPU
// stream, a kernel launch for a CUDA stream.
#pragma once

#include "runtime/core/buffer.h"
#include "runtime/core/stream.h"

namespace zt::zero_ops {

// dst[i] = src[i] converted to dst's dtype (rounding to nearest even). Same element count.
void convert_copy(Stream& stream, BufferView dst, BufferView src);
// dst[i] += src[i] (converted to f32). dst must be f32.
void accumulate(Stream& stream, BufferView dst, BufferView src);
void fill_zero(Stream& stream, BufferView dst);

}  // namespace zt::zero_ops
