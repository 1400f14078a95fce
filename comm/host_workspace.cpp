#include "comm/host_workspace.h"

namespace zt {

void HostWorkspace::reserve(std::size_t bytes) {
  if (bytes <= buffer_.bytes()) return;
  buffer_ = Buffer();  // free first: the peak should be the new size, not old + new
  buffer_ = Buffer::host(DType::f32, (bytes + 3) / 4, MemCategory::comm_staging, memory_);
}

BufferView HostWorkspace::get(DType dtype, std::size_t numel) {
  reserve(numel * dtype_size(dtype));
  return BufferView{buffer_.data(), numel, dtype, Device::cpu()};
}

}  // namespace zt
