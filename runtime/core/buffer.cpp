#include "runtime/core/buffer.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "runtime/core/device_memory.h"

namespace zt {

BufferView BufferView::slice(std::size_t offset, std::size_t count) const {
  if (offset > numel || count > numel - offset)
    throw std::out_of_range(fmt::format("buffer slice [{}, {}) is outside a view of {} elements", offset,
                                        offset + count, numel));
  return {static_cast<std::byte*>(data) + offset * dtype_size(dtype), count, dtype, device};
}

Buffer::Buffer(Device device, DType dtype, std::size_t numel, MemCategory category, MemoryTracker& tracker)
    : numel_(numel), dtype_(dtype), device_(device), category_(category), tracker_(&tracker) {
  allocate();
}

Buffer Buffer::host(DType dtype, std::size_t numel, MemCategory category, HostMemory memory, MemoryTracker& tracker) {
  Buffer buffer;
  buffer.numel_ = numel;
  buffer.dtype_ = dtype;
  buffer.category_ = category;
  buffer.memory_ = memory == HostMemory::pinned && cuda_device_count() > 0 ? HostMemory::pinned : HostMemory::pageable;
  buffer.tracker_ = &tracker;
  buffer.allocate();
  return buffer;
}

void Buffer::allocate() {
  std::size_t size = bytes();
  if (size == 0) return;
  if (device_.is_cuda()) {
    data_ = device_memory::allocate(device_, size);
  } else if (memory_ == HostMemory::pinned) {
    data_ = device_memory::allocate_pinned_host(size);
  } else {
    std::size_t rounded = (size + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    data_ = std::aligned_alloc(kHostAlignment, rounded);
    if (!data_)
      throw std::bad_alloc();
    std::memset(data_, 0, size);
  }
  auto space = device_.is_cuda() ? MemoryTracker::Space::device : MemoryTracker::Space::host;
  tracker_->charge(space, category_, static_cast<std::int64_t>(size));
}

void Buffer::free() noexcept {
  if (!data_) return;
  if (device_.is_cuda()) {
    device_memory::free(device_, data_);
  } else if (memory_ == HostMemory::pinned) {
    device_memory::free_pinned_host(data_);
  } else {
    std::free(data_);
  }
  auto space = device_.is_cuda() ? MemoryTracker::Space::device : MemoryTracker::Space::host;
  tracker_->release(space, category_, static_cast<std::int64_t>(bytes()));
  data_ = nullptr;
}

Buffer::~Buffer() { free(); }

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      numel_(std::exchange(other.numel_, 0)),
      dtype_(other.dtype_),
      device_(other.device_),
      category_(other.category_),
      memory_(other.memory_),
      tracker_(other.tracker_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    free();
    data_ = std::exchange(other.data_, nullptr);
    numel_ = std::exchange(other.numel_, 0);
    dtype_ = other.dtype_;
    device_ = other.device_;
    category_ = other.category_;
    memory_ = other.memory_;
    tracker_ = other.tracker_;
  }
  return *this;
}

}  // namespace zt
