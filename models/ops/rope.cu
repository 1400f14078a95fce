// Rotary position embeddings on the GPU (mirrors rope.cpp).
#include "models/ops/rope.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "models/cuda/cuda_context.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

// inv_freq: hs/2 host floats, at most kMaxRopeHalf, passed to the kernel by value.
constexpr int kMaxRopeHalf = 256;

struct RopeFreqs {
  float inv_freq[kMaxRopeHalf];
};

// One thread per (row, i < hs/2) pair, rotating channel i with i + hs/2 in each of the first
// `heads` heads of the row. The angle is rounded to fp32 before sincosf (accurate, not the
// intrinsic), as the CPU reference and transformers do.
template <typename S>
__global__ void rope_kernel(S* x, RopeFreqs freqs, int T, int heads, int hs, int ld, bool inverse, std::size_t n) {
  std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n) return;
  const int half = hs / 2;
  const int i = static_cast<int>(idx % half);
  const std::size_t row = idx / half;
  const float angle = static_cast<float>(row % T) * freqs.inv_freq[i];
  float sn, cs;
  sincosf(angle, &sn, &cs);
  if (inverse) sn = -sn;
  S* base = x + row * ld;
  for (int h = 0; h < heads; ++h) {
    S* v = base + static_cast<std::size_t>(h) * hs;
    const float a = load(v + i), b = load(v + i + half);
    store(v + i, a * cs - b * sn);
    store(v + i + half, b * cs + a * sn);
  }
}

template <typename S>
void launch_rope(void* x, const RopeFreqs& freqs, int B, int T, int heads, int hs, int ld, bool inverse,
                 cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(B) * T * (hs / 2);
  rope_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(x), freqs, T, heads, hs, ld, inverse,
                                                              n);
}

}  // namespace

void rope(void* x, const float* inv_freq, int B, int T, int heads, int hs, int ld, bool inverse, DType dt,
          cudaStream_t s) {
  if (hs / 2 > kMaxRopeHalf) throw std::invalid_argument("rope: head size too large for the kernel");
  RopeFreqs freqs{};
  std::memcpy(freqs.inv_freq, inv_freq, sizeof(float) * (hs / 2));
  ZT_DISPATCH_STORAGE(dt, launch_rope, x, freqs, B, T, heads, hs, ld, inverse, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

void rope(ComputeContext& ctx, BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
          bool inverse) {
  CudaComputeContext& c = as_cuda(ctx);
  if (hs / 2 > cuda::kMaxRopeHalf)
    throw std::invalid_argument("rope: head size " + std::to_string(hs) + " exceeds the kernel's " +
                                std::to_string(2 * cuda::kMaxRopeHalf));
  cuda::rope(x.data, inv_freq.data(), B, T, heads, hs, ld, inverse, c.dtype(), c.handle());
}

}  // namespace zt::models::ops::on_cuda
