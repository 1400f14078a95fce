#include "runtime/core/copy.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "runtime/core/cpu_stream.h"
#if ZT_HAVE_CUDA
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/cuda_stream.h"
#endif

namespace zt {

void copy_async(BufferView dst, BufferView src, Stream& stream) {
  if (dst.dtype != src.dtype || dst.numel != src.numel)
    throw std::invalid_argument(fmt::format("copy of {} {} elements into {} {} elements", src.numel,
                                            dtype_name(src.dtype), dst.numel, dtype_name(dst.dtype)));
  if (src.numel == 0) return;
  std::size_t bytes = src.bytes();
  if (auto* cpu = dynamic_cast<CpuStream*>(&stream)) {
    if (dst.device.is_cpu() && src.device.is_cpu()) {
      cpu->enqueue([=] { std::memcpy(dst.data, src.data, bytes); });
      return;
    }
#if ZT_HAVE_CUDA
    int device = dst.device.is_cuda() ? dst.device.index : src.device.index;
    cpu->enqueue([=] {
      ZT_CUDA_CHECK(cudaSetDevice(device));
      ZT_CUDA_CHECK(cudaMemcpy(dst.data, src.data, bytes, cudaMemcpyDefault));
    });
    return;
#endif
  }
#if ZT_HAVE_CUDA
  if (auto* cuda = dynamic_cast<CudaStream*>(&stream)) {
    ZT_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDefault, cuda->handle()));
    return;
  }
#endif
  throw std::invalid_argument(fmt::format("copy from {} to {} on a stream of device {} is not supported",
                                          src.device.str(), dst.device.str(), stream.device().str()));
}

}  // namespace zt
