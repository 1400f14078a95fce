#include "zero/device_ops.h"

#include <cstring>
#include <stdexcept>

#include "runtime/core/cpu_stream.h"
#if ZT_HAVE_CUDA
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/cuda_stream.h"
#include "zero/cuda/device_ops_cuda.h"
#endif

namespace zt::zero_ops {
namespace {

void check_same_size(const BufferView& dst, const BufferView& src, const char* op) {
  if (dst.numel != src.numel || dst.device != src.device)
    throw std::invalid_argument(std::string(op) + ": views differ in size or device");
}

float load(const BufferView& v, std::size_t i) {
  switch (v.dtype) {
    case DType::f32: return static_cast<const float*>(v.data)[i];
    case DType::bf16: return bf16_to_float(static_cast<const bf16*>(v.data)[i]);
    case DType::f16: return f16_to_float(static_cast<const f16*>(v.data)[i]);
  }
  return 0.0f;
}

#if ZT_HAVE_CUDA
cudaStream_t cuda_handle(Stream& stream) { return dynamic_cast<CudaStream&>(stream).handle(); }
#endif

// Runs work in the stream's order on the CPU: at once on an inline stream, as a task otherwise.
template <typename Work> void on_cpu(Stream& stream, Work work) {
  dynamic_cast<CpuStream&>(stream).enqueue(work);
}

}  // namespace

void convert_copy(Stream& stream, BufferView dst, BufferView src) {
  check_same_size(dst, src, "convert_copy");
  if (dst.numel == 0) return;
  if (dst.device.is_cpu()) {
    on_cpu(stream, [=] { convert_host(src.data, src.dtype, dst.data, dst.dtype, dst.numel); });
    return;
  }
#if ZT_HAVE_CUDA
  if (dst.dtype == src.dtype) {
    ZT_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, dst.bytes(), cudaMemcpyDeviceToDevice, cuda_handle(stream)));
  } else {
    cuda::convert_copy(dst, src, cuda_handle(stream));
  }
#endif
}

void accumulate(Stream& stream, BufferView dst, BufferView src) {
  check_same_size(dst, src, "accumulate");
  if (dst.dtype != DType::f32) throw std::invalid_argument("accumulate: the destination must be f32");
  if (dst.numel == 0) return;
  if (dst.device.is_cpu()) {
    on_cpu(stream, [=] {
      float* out = static_cast<float*>(dst.data);
      for (std::size_t i = 0; i < dst.numel; ++i) out[i] += load(src, i);
    });
    return;
  }
#if ZT_HAVE_CUDA
  cuda::accumulate(dst, src, cuda_handle(stream));
#endif
}

void fill_zero(Stream& stream, BufferView dst) {
  if (dst.numel == 0) return;
  if (dst.device.is_cpu()) {
    on_cpu(stream, [=] { std::memset(dst.data, 0, dst.bytes()); });
    return;
  }
#if ZT_HAVE_CUDA
  ZT_CUDA_CHECK(cudaMemsetAsync(dst.data, 0, dst.bytes(), cuda_handle(stream)));
#endif
}

}  // namespace zt::zero_ops
