// What differs between the CPU and a CUDA device at the ground floor: how many devices there are,
// making one current, raw memory, and the element-wise work that the layers above order on a
// stream (copies, dtype conversion, accumulation, zeroing).
//
// device_ops(device) picks the implementation at run time. The CUDA implementation exists only in
// builds with the CUDA backend; in a build without it, cuda_device_ops() (core/no_cuda.cpp) throws
// the one UserError that says so. Each layer with CUDA code keeps it in its cuda/ folder, which
// CMake compiles only with the backend (zt_device_sources), and reaches it through an interface
// like this one: no source file tests ZT_HAVE_CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/buffer.h"
#include "core/device.h"
#include "core/stream.h"

namespace zt {

struct DeviceMemoryInfo {
  std::int64_t free = 0;   // bytes the device can still hand out (host: MemAvailable)
  std::int64_t total = 0;  // bytes it has
};

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;

  // Usable devices of this kind: 1 for the CPU; 0 without a driver or a GPU.
  virtual int device_count() = 0;
  // Why device_count() is 0, as the driver said it (a driver older than the CUDA runtime reads
  // differently from a machine without a GPU); empty when there are devices.
  virtual std::string no_device_reason() { return {}; }
  // The device's name as its driver reports it ("NVIDIA H100 80GB HBM3"); "cpu" for the host.
  virtual std::string device_name(Device device) = 0;
  // Makes device current on the calling thread; every thread that touches a GPU calls it first.
  virtual void activate(Device device) = 0;
  virtual DeviceMemoryInfo memory_info(Device device) = 0;

  // Raw memory, not initialised. Only MemoryPool calls these (buffers come from the pool).
  virtual void* allocate(Device device, std::size_t bytes) = 0;
  virtual void free(Device device, void* pointer) noexcept = 0;
  // Host memory for staging copies: page-locked where a GPU can copy from it asynchronously.
  virtual void* allocate_staging(std::size_t bytes) = 0;
  virtual void free_staging(void* pointer) noexcept = 0;
  // Synchronous zero fill of freshly allocated memory, before any stream can use it.
  virtual void zero_now(Device device, void* pointer, std::size_t bytes) = 0;

  // dst <- src now, after everything queued on the device has finished: for tools, tests and
  // start-up, never inside a training step (it synchronises the whole device).
  virtual void copy_now(BufferView dst, BufferView src) = 0;

  // Enqueued on stream, in its order. copy: same dtype and size, any pair of host and device
  // memory. convert_copy: dst[i] = src[i] converted (round to nearest even). accumulate:
  // dst[i] += src[i], dst f32.
  virtual void copy(BufferView dst, BufferView src, Stream& stream) = 0;
  virtual void convert_copy(BufferView dst, BufferView src, Stream& stream) = 0;
  virtual void accumulate(BufferView dst, BufferView src, Stream& stream) = 0;
  virtual void fill_zero(BufferView dst, Stream& stream) = 0;
};

DeviceOps& cpu_device_ops();
// Throws zt::UserError in a build without the CUDA backend.
DeviceOps& cuda_device_ops();
DeviceOps& device_ops(Device device);

// Shorthands for the element-wise work, dispatched on the views' device.
void copy_async(BufferView dst, BufferView src, Stream& stream);
void copy_now(BufferView dst, BufferView src);
void convert_copy(BufferView dst, BufferView src, Stream& stream);
void accumulate(BufferView dst, BufferView src, Stream& stream);
void fill_zero(BufferView dst, Stream& stream);

}  // namespace zt
