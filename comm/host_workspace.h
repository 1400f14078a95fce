// Grow-only host memory of a comm stream: staging for GPU buffers that MPI cannot read directly,
// and scratch for the reduce-scatter ring's partial sums (mpi_ring.h). Used only by the comm
// stream's thread, so collectives that run one after another share it; charged to
// MemCategory::comm_staging.
#pragma once

#include <cstddef>

#include "core/buffer.h"

namespace zt {

class HostWorkspace {
 public:
  explicit HostWorkspace(Buffer::HostMemory memory) : memory_(memory) {}
  // A view of numel elements of dtype; invalidated by the next call that needs to grow.
  BufferView get(DType dtype, std::size_t numel);
  // Grows the memory to at least `bytes` now (start-up), so that get() up to that size never does.
  void reserve(std::size_t bytes);
  std::size_t capacity_bytes() const { return buffer_.bytes(); }

 private:
  Buffer::HostMemory memory_;
  Buffer buffer_;
};

}  // namespace zt
