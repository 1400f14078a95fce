#include "comm/host_workspace.h"

namespace zt {

BufferView HostWorkspace::get(DType dtype, std::size_t numel) {
  std::size_t bytes = numel * dtype_size(dtype);
  if (bytes > buffer_.bytes()) {
    buffer_ = Buffer();  // free first: the peak should be the new size, not old + new
    buffer_ = Buffer::host(DType::f32, (bytes + 3) / 4, MemCategory::comm_staging, memory_);
  }
  return BufferView{buffer_.data(), numel, dtype, Device::cpu()};
}

}  // namespace zt
