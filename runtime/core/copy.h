// Copies between buffer views of the same dtype and size, ordered on a stream.
#pragma once

#include "runtime/core/buffer.h"
#include "runtime/core/stream.h"

namespace zt {

// Enqueues dst <- src on stream: host to host, host to device, device to host or device to
// device. On a CPU stream the copy runs as one of its tasks; on a CUDA stream it is a
// cudaMemcpyAsync. Throws std::invalid_argument when the dtypes or sizes differ.
void copy_async(BufferView dst, BufferView src, Stream& stream);

}  // namespace zt
