// The CUDA implementation of the device ops (core/device_ops.h).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <stdexcept>

#include "core/cpu_stream.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_stream.h"
#include "core/cuda/elementwise.h"
#include "core/device_ops.h"
#include "core/log.h"

namespace zt {
namespace {

cudaStream_t handle_of(Stream& stream) { return as_cuda_stream(stream, "device memory work").handle(); }

void check_same_shape(const BufferView& dst, const BufferView& src, const char* op) {
  if (dst.numel != src.numel)
    throw std::invalid_argument(fmt::format("{}: {} elements into {} elements", op, src.numel, dst.numel));
}

class CudaDeviceOps final : public DeviceOps {
 public:
  int device_count() override {
    int count = 0;
    // No driver or no GPU is an answer (zero devices), not an error; no_device_reason() says which.
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return count;
  }

  std::string no_device_reason() override {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    (void)cudaGetLastError();
    if (status == cudaSuccess)
      return count > 0 ? std::string() : "cudaGetDeviceCount found no device";
    int runtime = 0, driver = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    (void)cudaDriverGetVersion(&driver);
    return fmt::format("cudaGetDeviceCount: {} ({}); CUDA runtime {}.{}, driver supports {}", cudaGetErrorString(status),
                       cudaGetErrorName(status), runtime / 1000, runtime % 1000 / 10,
                       driver == 0 ? std::string("no CUDA (no driver loaded)")
                                   : fmt::format("CUDA {}.{}", driver / 1000, driver % 1000 / 10));
  }

  void activate(Device device) override { ZT_CUDA_CHECK(cudaSetDevice(device.index)); }

  std::string device_name(Device device) override {
    cudaDeviceProp properties{};
    ZT_CUDA_CHECK(cudaGetDeviceProperties(&properties, device.index));
    return properties.name;
  }

  DeviceMemoryInfo memory_info(Device device) override {
    activate(device);
    std::size_t free = 0, total = 0;
    ZT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return {static_cast<std::int64_t>(free), static_cast<std::int64_t>(total)};
  }

  void* allocate(Device device, std::size_t bytes) override {
    activate(device);
    void* pointer = nullptr;
    ZT_CUDA_CHECK(cudaMalloc(&pointer, bytes));
    return pointer;
  }

  void free(Device device, void* pointer) noexcept override {
    // A destructor cannot throw; a failing free means the context is already broken, so report it.
    if (cudaSetDevice(device.index) != cudaSuccess || cudaFree(pointer) != cudaSuccess)
      log::error("cudaFree failed on {}: {}", device.str(), cudaGetErrorString(cudaGetLastError()));
  }

  void* allocate_staging(std::size_t bytes) override {
    void* pointer = nullptr;
    ZT_CUDA_CHECK(cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable));
    return pointer;
  }

  void free_staging(void* pointer) noexcept override {
    if (cudaFreeHost(pointer) != cudaSuccess) log::error("cudaFreeHost failed: {}", cudaGetErrorString(cudaGetLastError()));
  }

  void zero_now(Device device, void* pointer, std::size_t bytes) override {
    // The block may have been used by work still queued on a stream (a reused block), and the
    // legacy-stream memset is not ordered with our non-blocking streams: wait for the device on
    // both sides. Only start-up and checkpoint code make buffers this way (see Buffer).
    activate(device);
    ZT_CUDA_CHECK(cudaDeviceSynchronize());
    ZT_CUDA_CHECK(cudaMemset(pointer, 0, bytes));
    ZT_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void copy_now(BufferView dst, BufferView src) override {
    check_same_shape(dst, src, "copy");
    if (dst.dtype != src.dtype) throw std::invalid_argument("copy: the dtypes differ (use convert_copy)");
    if (src.numel == 0) return;
    // Our streams are non-blocking: the legacy-stream copy is not ordered with them.
    ZT_CUDA_CHECK(cudaDeviceSynchronize());
    ZT_CUDA_CHECK(cudaMemcpy(dst.data, src.data, src.bytes(), cudaMemcpyDefault));
  }

  void copy(BufferView dst, BufferView src, Stream& stream) override {
    check_same_shape(dst, src, "copy");
    if (dst.dtype != src.dtype) throw std::invalid_argument("copy: the dtypes differ (use convert_copy)");
    if (src.numel == 0) return;
    const std::size_t bytes = src.bytes();
    if (stream.device().is_cpu()) {
      // A host thread's stream (the MPI comm worker staging GPU buffers): the copy is one of its
      // tasks, on this rank's device.
      const int device = dst.device.is_cuda() ? dst.device.index : src.device.index;
      as_cpu_stream(stream, "a staging copy").enqueue([=] {
        ZT_CUDA_CHECK(cudaSetDevice(device));
        ZT_CUDA_CHECK(cudaMemcpy(dst.data, src.data, bytes, cudaMemcpyDefault));
      });
      return;
    }
    ZT_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDefault, handle_of(stream)));
  }

  void convert_copy(BufferView dst, BufferView src, Stream& stream) override {
    check_same_shape(dst, src, "convert_copy");
    if (dst.numel == 0) return;
    if (dst.dtype == src.dtype) {
      ZT_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, dst.bytes(), cudaMemcpyDeviceToDevice, handle_of(stream)));
    } else {
      cuda::convert_copy(dst, src, handle_of(stream));
    }
  }

  void accumulate(BufferView dst, BufferView src, Stream& stream) override {
    check_same_shape(dst, src, "accumulate");
    if (dst.dtype != DType::f32) throw std::invalid_argument("accumulate: the destination must be f32");
    if (dst.numel == 0) return;
    cuda::accumulate(dst, src, handle_of(stream));
  }

  void fill_zero(BufferView dst, Stream& stream) override {
    if (dst.numel == 0) return;
    ZT_CUDA_CHECK(cudaMemsetAsync(dst.data, 0, dst.bytes(), handle_of(stream)));
  }
};

}  // namespace

bool cuda_built() { return true; }

DeviceOps& cuda_device_ops() {
  static CudaDeviceOps ops;
  return ops;
}

}  // namespace zt
