// The CUDA entry points of a build without the CUDA backend: no device is ever available, so
// require_available() has already refused any CUDA device before these could allocate.
#include <stdexcept>

#include "runtime/core/device.h"
#include "runtime/core/device_memory.h"

namespace zt {

bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
void activate(Device device) { require_available(device); }

namespace device_memory {
void* allocate(Device device, std::size_t) {
  require_available(device);
  throw std::logic_error("unreachable: CUDA allocation in a build without CUDA");
}
void free(Device, void*) noexcept {}
void* allocate_pinned_host(std::size_t) { throw std::logic_error("pinned host memory needs the CUDA backend"); }
void free_pinned_host(void*) noexcept {}
std::size_t free_bytes(Device device) {
  require_available(device);
  throw std::logic_error("unreachable: CUDA memory query in a build without CUDA");
}
}  // namespace device_memory

}  // namespace zt
