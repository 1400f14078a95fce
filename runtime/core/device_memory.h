// Raw device and pinned-host allocation, behind the CUDA backend. Buffer is the only user;
// everything else allocates through Buffer so that every byte is charged to a category.
#pragma once

#include <cstddef>

#include "runtime/core/device.h"

namespace zt::device_memory {

void* allocate(Device device, std::size_t bytes);  // zero-filled
void free(Device device, void* pointer) noexcept;
void* allocate_pinned_host(std::size_t bytes);     // zero-filled
void free_pinned_host(void* pointer) noexcept;
std::size_t free_bytes(Device device);  // memory of a CUDA device not yet allocated by anyone

}  // namespace zt::device_memory
