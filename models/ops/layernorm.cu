// LayerNorm on the GPU (mirrors layernorm.cpp): one warp per row, fp32 statistics, eight elements
// a lane at a time where rows are 16-byte aligned multiples of 8 (the residual add before it then
// in the same kernel).
#include "models/ops/layernorm.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/shared_kernels.h"
#include "models/cuda/storage.cuh"
#include "models/ops/residual.h"

namespace zt::models::cuda {

namespace {

constexpr float kEps = 1e-5f;
constexpr int kWarpsPerBlock = 8;
constexpr int kRowsPerChunk = 64;  // as column_sum_scratch_floats()

// inp (N, C) -> out (N, C), mean (N), rstd (N). Two passes over the row (mean, then variance of
// the centred values) for accuracy close to the double-precision CPU reference.
template <typename S>
__global__ void layernorm_forward_kernel(S* out, float* mean, float* rstd, const S* inp, const S* weight, const S* bias,
                                         int N, int C) {
  int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= N) return;
  const S* x = inp + static_cast<std::size_t>(row) * C;
  float sum = 0.0f;
  for (int c = lane; c < C; c += 32) sum += load(x + c);
  float m = warp_sum(sum) / C;
  float var = 0.0f;
  for (int c = lane; c < C; c += 32) {
    float d = load(x + c) - m;
    var += d * d;
  }
  float s = rsqrtf(warp_sum(var) / C + kEps);
  S* o = out + static_cast<std::size_t>(row) * C;
  for (int c = lane; c < C; c += 32) store(o + c, (load(x + c) - m) * s * load(weight + c) + load(bias + c));
  if (lane == 0) mean[row] = m, rstd[row] = s;
}

// The same for rows of 16-byte aligned multiples of 8 elements, eight a lane at a time. With b
// (residual_layernorm_forward), the row is first mid = a + b, stored, and normalised as stored
// (each lane reads back only what it wrote); otherwise a is the input.
template <typename S>
__global__ void layernorm_forward_vec8_kernel(S* out, float* mean, float* rstd, S* mid, const S* a, const S* b,
                                              const S* weight, const S* bias, int N, int C) {
  int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= N) return;
  const std::size_t base = static_cast<std::size_t>(row) * C;
  float x[8], y[8];
  float sum = 0.0f;
  for (int c = lane * 8; c < C; c += 32 * 8) {
    load8(a + base + c, x);
    if (b != nullptr) {
      load8(b + base + c, y);
#pragma unroll
      for (int k = 0; k < 8; ++k) x[k] = rounded<S>(x[k] + y[k]);
      store8(mid + base + c, x);
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) sum += x[k];
  }
  const S* in = b != nullptr ? mid + base : a + base;
  const float m = warp_sum(sum) / C;
  float var = 0.0f;
  for (int c = lane * 8; c < C; c += 32 * 8) {
    load8(in + c, x);
#pragma unroll
    for (int k = 0; k < 8; ++k) var += (x[k] - m) * (x[k] - m);
  }
  const float s = rsqrtf(warp_sum(var) / C + kEps);
  for (int c = lane * 8; c < C; c += 32 * 8) {
    load8(in + c, x), load8(weight + c, y);
    float z[8];
    load8(bias + c, z);
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = (x[k] - m) * s * y[k] + z[k];
    store8(out + base + c, x);
  }
  if (lane == 0) mean[row] = m, rstd[row] = s;
}

// dinp (N, C) += rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dout * weight.
template <typename S>
__global__ void layernorm_backward_input_kernel(S* dinp, const S* dout, const S* inp, const S* weight,
                                                const float* mean, const float* rstd, int N, int C) {
  int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= N) return;
  std::size_t base = static_cast<std::size_t>(row) * C;
  float m = mean[row], s = rstd[row];
  float g_sum = 0.0f, gx_sum = 0.0f;
  for (int c = lane; c < C; c += 32) {
    float g = load(dout + base + c) * load(weight + c);
    g_sum += g;
    gx_sum += g * (load(inp + base + c) - m) * s;
  }
  float g_mean = warp_sum(g_sum) / C, gx_mean = warp_sum(gx_sum) / C;
  for (int c = lane; c < C; c += 32) {
    float xhat = (load(inp + base + c) - m) * s;
    float g = load(dout + base + c) * load(weight + c);
    store(dinp + base + c, load(dinp + base + c) + s * (g - g_mean - xhat * gx_mean));
  }
}

// The same, eight columns a lane per access (C % 8 == 0, 16-byte aligned rows): the scalar loop
// above keeps too few loads in flight and took a tenth of a GPT-2 step. The second sweep re-reads
// the row from L1.
template <typename S>
__global__ void layernorm_backward_input_vec8_kernel(S* dinp, const S* dout, const S* inp, const S* weight,
                                                     const float* mean, const float* rstd, int N, int C) {
  int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= N) return;
  std::size_t base = static_cast<std::size_t>(row) * C;
  float m = mean[row], s = rstd[row];
  float g_sum = 0.0f, gx_sum = 0.0f, d[8], x[8], w[8];
  for (int c = lane * 8; c < C; c += 32 * 8) {
    load8(dout + base + c, d), load8(inp + base + c, x), load8(weight + c, w);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      float g = d[k] * w[k];
      g_sum += g;
      gx_sum += g * (x[k] - m) * s;
    }
  }
  float g_mean = warp_sum(g_sum) / C, gx_mean = warp_sum(gx_sum) / C;
  for (int c = lane * 8; c < C; c += 32 * 8) {
    float acc[8];
    load8(dout + base + c, d), load8(inp + base + c, x), load8(weight + c, w), load8(dinp + base + c, acc);
#pragma unroll
    for (int k = 0; k < 8; ++k) acc[k] += s * (d[k] * w[k] - g_mean - (x[k] - m) * s * gx_mean);
    store8(dinp + base + c, acc);
  }
}

// partial[chunk][c] = sum dout * xhat, partial[chunk][C + c] = sum dout over the chunk's rows.
template <typename S>
__global__ void layernorm_backward_partial_kernel(float* partial, const S* dout, const S* inp, const float* mean,
                                                  const float* rstd, int N, int C) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  const int chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
  for (int chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    int end = min(N, (chunk + 1) * kRowsPerChunk);
    float dw = 0.0f, db = 0.0f;
    for (int r = chunk * kRowsPerChunk; r < end; ++r) {
      std::size_t i = static_cast<std::size_t>(r) * C + c;
      float d = load(dout + i);
      dw += d * (load(inp + i) - mean[r]) * rstd[r];
      db += d;
    }
    partial[static_cast<std::size_t>(chunk) * 2 * C + c] = dw;
    partial[static_cast<std::size_t>(chunk) * 2 * C + C + c] = db;
  }
}

template <typename S>
__global__ void layernorm_backward_finish_kernel(S* dweight, S* dbias, const float* partial, int chunks, int C) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float dw = 0.0f, db = 0.0f;
  for (int k = 0; k < chunks; ++k) {
    dw += partial[static_cast<std::size_t>(k) * 2 * C + c];
    db += partial[static_cast<std::size_t>(k) * 2 * C + C + c];
  }
  store(dweight + c, load(dweight + c) + dw);
  store(dbias + c, load(dbias + c) + db);
}

template <typename S>
void launch_forward(void* out, float* mean, float* rstd, const void* inp, const void* weight, const void* bias, int N,
                    int C, cudaStream_t s) {
  const unsigned blocks = row_blocks(N, kWarpsPerBlock);
  if (vectorizable(C, {out, inp, weight, bias})) {
    layernorm_forward_vec8_kernel<S><<<blocks, kWarpsPerBlock * 32, 0, s>>>(
        static_cast<S*>(out), mean, rstd, nullptr, static_cast<const S*>(inp), nullptr, static_cast<const S*>(weight),
        static_cast<const S*>(bias), N, C);
    return;
  }
  layernorm_forward_kernel<S><<<blocks, kWarpsPerBlock * 32, 0, s>>>(static_cast<S*>(out), mean, rstd,
                                                                    static_cast<const S*>(inp),
                                                                    static_cast<const S*>(weight),
                                                                    static_cast<const S*>(bias), N, C);
}

template <typename S>
void launch_residual_forward(void* mid, void* out, float* mean, float* rstd, const void* a, const void* b,
                             const void* weight, const void* bias, int N, int C, cudaStream_t s) {
  layernorm_forward_vec8_kernel<S><<<row_blocks(N, kWarpsPerBlock), kWarpsPerBlock * 32, 0, s>>>(
      static_cast<S*>(out), mean, rstd, static_cast<S*>(mid), static_cast<const S*>(a), static_cast<const S*>(b),
      static_cast<const S*>(weight), static_cast<const S*>(bias), N, C);
}

template <typename S>
void launch_backward(void* dinp, void* dweight, void* dbias, const void* dout, const void* inp, const void* weight,
                     const float* mean, const float* rstd, float* scratch, int N, int C, cudaStream_t s) {
  const unsigned blocks = row_blocks(N, kWarpsPerBlock);
  if (vectorizable(C, {dinp, dout, inp, weight}))
    layernorm_backward_input_vec8_kernel<S><<<blocks, kWarpsPerBlock * 32, 0, s>>>(
        static_cast<S*>(dinp), static_cast<const S*>(dout), static_cast<const S*>(inp), static_cast<const S*>(weight),
        mean, rstd, N, C);
  else
    layernorm_backward_input_kernel<S><<<blocks, kWarpsPerBlock * 32, 0, s>>>(
        static_cast<S*>(dinp), static_cast<const S*>(dout), static_cast<const S*>(inp), static_cast<const S*>(weight),
        mean, rstd, N, C);
  int chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
  dim3 grid(blocks_for(C, 256), chunk_grid_y(chunks));
  layernorm_backward_partial_kernel<S><<<grid, 256, 0, s>>>(scratch, static_cast<const S*>(dout),
                                                            static_cast<const S*>(inp), mean, rstd, N, C);
  layernorm_backward_finish_kernel<S><<<(C + 255) / 256, 256, 0, s>>>(static_cast<S*>(dweight),
                                                                      static_cast<S*>(dbias), scratch, chunks, C);
}

}  // namespace

void layernorm_forward(void* out, float* mean, float* rstd, const void* inp, const void* weight, const void* bias,
                       int N, int C, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_forward, out, mean, rstd, inp, weight, bias, N, C, s);
}

// mid = a + b and out = layernorm(mid) in one kernel where the rows allow eight-element accesses;
// false (nothing queued) otherwise.
bool residual_layernorm_forward(void* mid, void* out, float* mean, float* rstd, const void* a, const void* b,
                                const void* weight, const void* bias, int N, int C, DType dt, cudaStream_t s) {
  if (N <= 0 || !vectorizable(C, {mid, out, a, b, weight, bias})) return false;
  ZT_DISPATCH_STORAGE(dt, launch_residual_forward, mid, out, mean, rstd, a, b, weight, bias, N, C, s);
  return true;
}

void layernorm_backward(void* dinp, void* dweight, void* dbias, const void* dout, const void* inp, const void* weight,
                        const float* mean, const float* rstd, float* scratch, int N, int C, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_backward, dinp, dweight, dbias, dout, inp, weight, mean, rstd, scratch, N, C, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

void layernorm_forward(ComputeContext& ctx, BufferView out, BufferView mean, BufferView rstd, BufferView inp,
                       BufferView weight, BufferView bias, int N, int C) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::layernorm_forward(out.data, float_data(mean), float_data(rstd), inp.data, weight.data, bias.data, N, C,
                          c.dtype(), c.handle());
}

void layernorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                        BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N, int C) {
  CudaComputeContext& c = as_cuda(ctx);
  float* scratch = c.reduction_scratch(cuda::column_sum_scratch_floats(N, 2 * C));
  cuda::layernorm_backward(dinp.data, dweight.data, dbias.data, dout.data, inp.data, weight.data, float_data(mean),
                           float_data(rstd), scratch, N, C, c.dtype(), c.handle());
}

// One kernel where the rows allow eight-element accesses (GPT-2's), else the two kernels.
void residual_layernorm_forward(ComputeContext& ctx, BufferView mid, BufferView out, BufferView mean, BufferView rstd,
                                BufferView a, BufferView b, BufferView weight, BufferView bias, int N, int C) {
  CudaComputeContext& c = as_cuda(ctx);
  if (cuda::residual_layernorm_forward(mid.data, out.data, float_data(mean), float_data(rstd), a.data, b.data,
                                       weight.data, bias.data, N, C, c.dtype(), c.handle()))
    return;
  const std::size_t n = static_cast<std::size_t>(N) * C;
  on_cuda::residual_forward(ctx, mid.slice(0, n), a.slice(0, n), b.slice(0, n));
  layernorm_forward(ctx, out, mean, rstd, mid, weight, bias, N, C);
}
}  // namespace zt::models::ops::on_cuda
