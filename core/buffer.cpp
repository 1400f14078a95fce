#include "core/buffer.h"

#include <fmt/format.h>

#include <utility>

#include "core/device_ops.h"
#include "core/memory_pool.h"

namespace zt {

BufferView BufferView::slice(std::size_t offset, std::size_t count) const {
  if (offset > numel || count > numel - offset)
    throw std::out_of_range(fmt::format("buffer slice [{}, {}) is outside a view of {} elements", offset,
                                        offset + count, numel));
  return {static_cast<std::byte*>(data) + offset * dtype_size(dtype), count, dtype, device};
}

Buffer::Buffer(Device device, DType dtype, std::size_t numel, MemCategory category, MemoryTracker& tracker)
    : numel_(numel), dtype_(dtype), device_(device), category_(category), tracker_(&tracker) {
  allocate(nullptr);
}

Buffer::Buffer(Device device, DType dtype, std::size_t numel, MemCategory category, Stream& zero_on,
               MemoryTracker& tracker)
    : numel_(numel), dtype_(dtype), device_(device), category_(category), tracker_(&tracker) {
  allocate(&zero_on);
}

Buffer Buffer::host(DType dtype, std::size_t numel, MemCategory category, HostMemory memory, MemoryTracker& tracker) {
  Buffer buffer;
  buffer.numel_ = numel;
  buffer.dtype_ = dtype;
  buffer.category_ = category;
  buffer.memory_ = memory == HostMemory::pinned && cuda_device_count() > 0 ? HostMemory::pinned : HostMemory::pageable;
  buffer.tracker_ = &tracker;
  buffer.allocate(nullptr);
  return buffer;
}

void Buffer::allocate(Stream* zero_on) {
  const std::size_t size = bytes();
  if (size == 0) return;
  if (memory_ == HostMemory::pinned) {
    // Staging memory is made once, at start-up, and kept: it does not go through the pool.
    DeviceOps& ops = cuda_device_ops();
    data_ = ops.allocate_staging(size);
    cpu_device_ops().zero_now(Device::cpu(), data_, size);
    tracker_->charge(MemoryTracker::Space::host, category_, static_cast<std::int64_t>(size));
    return;
  }
  bool fresh = false;
  data_ = MemoryPool::of(device_).take(size, category_, *tracker_, fresh);
  if (fresh) return;
  if (zero_on) {
    fill_zero(view(), *zero_on);
  } else {
    device_ops(device_).zero_now(device_, data_, size);
  }
}

void Buffer::free() noexcept {
  if (!data_) return;
  if (memory_ == HostMemory::pinned) {
    cuda_device_ops().free_staging(data_);
    tracker_->release(MemoryTracker::Space::host, category_, static_cast<std::int64_t>(bytes()));
  } else {
    MemoryPool::of(device_).give_back(data_, bytes(), category_, *tracker_);
  }
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
