#include <cuda_runtime.h>

#include <cstring>

#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/device_memory.h"
#include "runtime/core/log.h"

namespace zt::device_memory {

void* allocate(Device device, std::size_t bytes) {
  activate(device);
  void* pointer = nullptr;
  ZT_CUDA_CHECK(cudaMalloc(&pointer, bytes));
  ZT_CUDA_CHECK(cudaMemset(pointer, 0, bytes));
  return pointer;
}

void free(Device device, void* pointer) noexcept {
  // A destructor cannot throw; a failing free means the context is already broken, so report it.
  if (cudaSetDevice(device.index) != cudaSuccess || cudaFree(pointer) != cudaSuccess)
    log::error("cudaFree failed on {}: {}", device.str(), cudaGetErrorString(cudaGetLastError()));
}

std::size_t free_bytes(Device device) {
  activate(device);
  std::size_t free = 0, total = 0;
  ZT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

void* allocate_pinned_host(std::size_t bytes) {
  void* pointer = nullptr;
  ZT_CUDA_CHECK(cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable));
  std::memset(pointer, 0, bytes);
  return pointer;
}

void free_pinned_host(void* pointer) noexcept {
  if (cudaFreeHost(pointer) != cudaSuccess) log::error("cudaFreeHost failed: {}", cudaGetErrorString(cudaGetLastError()));
}

}  // namespace zt::device_memory
