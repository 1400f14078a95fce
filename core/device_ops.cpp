#include "core/device_ops.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>
#include <string>

#include "core/cpu_stream.h"
#include "core/host_arith.h"
#include "core/memory_pool.h"

namespace zt {
namespace {

void check_same_shape(const BufferView& dst, const BufferView& src, const char* op) {
  if (dst.numel != src.numel)
    throw std::invalid_argument(fmt::format("{}: {} elements into {} elements", op, src.numel, dst.numel));
}

void check_same_dtype(const BufferView& dst, const BufferView& src) {
  if (dst.dtype != src.dtype)
    throw std::invalid_argument(fmt::format("copy of {} elements into {} elements (use convert_copy)",
                                            dtype_name(src.dtype), dtype_name(dst.dtype)));
}

// The CPU: memory from the C allocator, work run in the stream's order by a CpuStream (at once
// on the compute stream, which is the calling thread; as a task on a worker's queue otherwise).
class CpuDeviceOps final : public DeviceOps {
 public:
  int device_count() override { return 1; }
  void activate(Device) override {}
  std::string device_name(Device) override { return "cpu"; }

  DeviceMemoryInfo memory_info(Device) override {
    DeviceMemoryInfo info;
    std::ifstream meminfo("/proc/meminfo");
    std::string key, unit;
    std::int64_t kib = 0;
    while (meminfo >> key >> kib >> unit) {
      if (key == "MemTotal:") info.total = kib * 1024;
      if (key == "MemAvailable:") info.free = kib * 1024;
    }
    return info;
  }

  void* allocate(Device, std::size_t bytes) override {
    void* pointer = std::aligned_alloc(MemoryPool::kAlignment, MemoryPool::rounded(bytes));
    if (!pointer) throw std::bad_alloc();
    return pointer;
  }
  void free(Device, void* pointer) noexcept override { std::free(pointer); }
  void* allocate_staging(std::size_t bytes) override { return allocate(Device::cpu(), bytes); }
  void free_staging(void* pointer) noexcept override { std::free(pointer); }
  void zero_now(Device, void* pointer, std::size_t bytes) override { std::memset(pointer, 0, bytes); }

  void copy_now(BufferView dst, BufferView src) override {
    check_same_shape(dst, src, "copy");
    check_same_dtype(dst, src);
    if (src.numel > 0) std::memcpy(dst.data, src.data, src.bytes());
  }

  void copy(BufferView dst, BufferView src, Stream& stream) override {
    check_same_shape(dst, src, "copy");
    check_same_dtype(dst, src);
    if (src.numel == 0) return;
    on_stream(stream, [=] { std::memcpy(dst.data, src.data, src.bytes()); });
  }
  void convert_copy(BufferView dst, BufferView src, Stream& stream) override {
    check_same_shape(dst, src, "convert_copy");
    if (dst.numel == 0) return;
    on_stream(stream, [=] { convert_host(src.data, src.dtype, dst.data, dst.dtype, dst.numel); });
  }
  void accumulate(BufferView dst, BufferView src, Stream& stream) override {
    check_same_shape(dst, src, "accumulate");
    if (dst.dtype != DType::f32) throw std::invalid_argument("accumulate: the destination must be f32");
    if (src.dtype == DType::i32) throw std::invalid_argument("accumulate: an i32 buffer has no float values");
    if (dst.numel == 0) return;
    on_stream(stream, [=] { accumulate_into(static_cast<float*>(dst.data), src.data, src.dtype, dst.numel); });
  }
  void fill_zero(BufferView dst, Stream& stream) override {
    if (dst.numel == 0) return;
    on_stream(stream, [=] { std::memset(dst.data, 0, dst.bytes()); });
  }

 private:
  template <typename Work> static void on_stream(Stream& stream, Work work) {
    as_cpu_stream(stream, "host memory work").enqueue(std::move(work));
  }
};

}  // namespace

DeviceOps& cpu_device_ops() {
  static CpuDeviceOps ops;
  return ops;
}

DeviceOps& device_ops(Device device) { return device.is_cpu() ? cpu_device_ops() : cuda_device_ops(); }

namespace {
// The ops of the device a copy runs on: the non-host side of the pair, if any.
DeviceOps& device_ops_for(const BufferView& dst, const BufferView& src) {
  return device_ops(dst.device.is_cuda() ? dst.device : src.device);
}
}  // namespace

void copy_async(BufferView dst, BufferView src, Stream& stream) { device_ops_for(dst, src).copy(dst, src, stream); }
void copy_now(BufferView dst, BufferView src) { device_ops_for(dst, src).copy_now(dst, src); }

void convert_copy(BufferView dst, BufferView src, Stream& stream) {
  if (dst.device != src.device) throw std::invalid_argument("convert_copy: the views are on different devices");
  device_ops(dst.device).convert_copy(dst, src, stream);
}

void accumulate(BufferView dst, BufferView src, Stream& stream) {
  if (dst.device != src.device) throw std::invalid_argument("accumulate: the views are on different devices");
  device_ops(dst.device).accumulate(dst, src, stream);
}

void fill_zero(BufferView dst, Stream& stream) { device_ops(dst.device).fill_zero(dst, stream); }

}  // namespace zt
