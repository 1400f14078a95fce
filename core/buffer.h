// Typed, owned memory on a device, charged to a memory category.
//
// A Buffer owns its bytes (RAII, move-only) and is zero-filled on allocation, so runs are
// deterministic. Its memory comes from the device's MemoryPool and goes back there when it is
// destroyed (memory_pool.h). A BufferView is a non-owning window into one (a flat parameter's
// named views, a bucket's slice, a shard) and is what kernels and collectives take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "core/device.h"
#include "core/dtype.h"
#include "core/memory.h"

namespace zt {

class Stream;

struct BufferView {
  void* data = nullptr;
  std::size_t numel = 0;
  DType dtype = DType::f32;
  Device device = Device::cpu();

  std::size_t bytes() const { return numel * dtype_size(dtype); }
  // Elements [offset, offset + count) of this view; throws std::out_of_range past the end.
  BufferView slice(std::size_t offset, std::size_t count) const;
  // Typed pointer; throws std::logic_error when T does not match the dtype.
  template <typename T> T* as() const {
    if (dtype_of<T>() != dtype) throw std::logic_error("BufferView::as: element type does not match the view's dtype");
    return static_cast<T*>(data);
  }
};

class Buffer {
 public:
  // Host memory that may be pinned (page-locked) when the CUDA backend is present, for fast
  // staging copies; pageable otherwise.
  enum class HostMemory { pageable, pinned };

  Buffer() = default;
  // Zero-filled before the constructor returns. Not for use inside a training step on a GPU:
  // zeroing a reused block there would need the whole device to be idle.
  Buffer(Device device, DType dtype, std::size_t numel, MemCategory category,
         MemoryTracker& tracker = MemoryTracker::process());
  // Zero-filled in zero_on's order (a reused block may still be read by work enqueued before):
  // what buffers made inside a training step use.
  Buffer(Device device, DType dtype, std::size_t numel, MemCategory category, Stream& zero_on,
         MemoryTracker& tracker = MemoryTracker::process());
  static Buffer host(DType dtype, std::size_t numel, MemCategory category, HostMemory memory,
                     MemoryTracker& tracker = MemoryTracker::process());
  ~Buffer();

  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  template <typename T> T* data_as() const { return view().as<T>(); }
  std::size_t numel() const { return numel_; }
  std::size_t bytes() const { return numel_ * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  MemCategory category() const { return category_; }
  bool pinned() const { return memory_ == HostMemory::pinned; }
  bool empty() const { return numel_ == 0; }

  BufferView view() const { return {data_, numel_, dtype_, device_}; }
  BufferView slice(std::size_t offset, std::size_t count) const { return view().slice(offset, count); }

 private:
  void allocate(Stream* zero_on);
  void free() noexcept;

  void* data_ = nullptr;
  std::size_t numel_ = 0;
  DType dtype_ = DType::f32;
  Device device_ = Device::cpu();
  MemCategory category_ = MemCategory::workspace;
  HostMemory memory_ = HostMemory::pageable;
  MemoryTracker* tracker_ = nullptr;
};

// Alignment of host allocations: a cache line, and enough for any SIMD load.
inline constexpr std::size_t kHostAlignment = 64;

}  // namespace zt
