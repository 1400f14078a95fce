// RMSNorm on the GPU (mirrors models/ops/rmsnorm.*): one warp per row, fp32 statistics, rows
// placed by (group, stride) so QK-norm can normalise the heads inside fused qkv rows.
#include "models/ops/rmsnorm.h"

#include "models/cuda/cuda_context.h"
#include "models/cuda/shared_kernels.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kRowsPerChunk = 64;  // as column_sum_scratch_floats()

struct RowMap {
  int group;
  std::size_t stride;
  __device__ std::size_t offset(int row, int C) const {
    return static_cast<std::size_t>(row / group) * stride + static_cast<std::size_t>(row % group) * C;
  }
};

// inp rows (rows, C) -> out rows, rstd (rows)
template <typename S>
__global__ void rmsnorm_forward_kernel(S* out, float* rstd, const S* inp, const S* weight, int rows, int C, float eps,
                                       RowMap map) {
  int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const std::size_t at = map.offset(row, C);
  float ss = 0.0f;
  for (int c = lane; c < C; c += 32) {
    float x = load(inp + at + c);
    ss += x * x;
  }
  float s = rsqrtf(warp_sum(ss) / C + eps);
  for (int c = lane; c < C; c += 32) store(out + at + c, load(weight + c) * (load(inp + at + c) * s));
  if (lane == 0) rstd[row] = s;
}

// dinp = rstd * (g - xhat * mean(g * xhat)), g = dout * weight; += when accumulating. Each lane
// reads dout[c] before writing dinp[c], so dinp may alias dout when not accumulating.
template <typename S>
__global__ void rmsnorm_backward_input_kernel(S* dinp, const S* dout, const S* inp, const S* weight, const float* rstd,
                                              int rows, int C, RowMap map, bool accumulate) {
  int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const std::size_t at = map.offset(row, C);
  const float s = rstd[row];
  float gx = 0.0f;
  for (int c = lane; c < C; c += 32) gx += load(dout + at + c) * load(weight + c) * load(inp + at + c) * s;
  const float gx_mean = warp_sum(gx) / C;
  for (int c = lane; c < C; c += 32) {
    float xhat = load(inp + at + c) * s;
    float v = s * (load(dout + at + c) * load(weight + c) - xhat * gx_mean);
    store(dinp + at + c, accumulate ? load(dinp + at + c) + v : v);
  }
}

// partial[chunk][c] = sum over the chunk's rows of dout * xhat.
template <typename S>
__global__ void rmsnorm_backward_partial_kernel(float* partial, const S* dout, const S* inp, const float* rstd,
                                                int rows, int C, RowMap map) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  const int chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
  for (int chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    int end = min(rows, (chunk + 1) * kRowsPerChunk);
    float dw = 0.0f;
    for (int r = chunk * kRowsPerChunk; r < end; ++r) {
      std::size_t i = map.offset(r, C) + c;
      dw += load(dout + i) * load(inp + i) * rstd[r];
    }
    partial[static_cast<std::size_t>(chunk) * C + c] = dw;
  }
}

template <typename S>
__global__ void rmsnorm_backward_finish_kernel(S* dweight, const float* partial, int chunks, int C) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float dw = 0.0f;
  for (int k = 0; k < chunks; ++k) dw += partial[static_cast<std::size_t>(k) * C + c];
  store(dweight + c, load(dweight + c) + dw);
}

RowMap row_map(int group, std::size_t stride, int C) {
  return {group, stride ? stride : static_cast<std::size_t>(group) * C};
}

template <typename S>
void launch_forward(void* out, float* rstd, const void* inp, const void* weight, int rows, int C, float eps, int group,
                    std::size_t stride, cudaStream_t s) {
  const unsigned blocks = row_blocks(rows, kWarpsPerBlock);
  rmsnorm_forward_kernel<S><<<blocks, kWarpsPerBlock * 32, 0, s>>>(static_cast<S*>(out), rstd,
                                                                  static_cast<const S*>(inp),
                                                                  static_cast<const S*>(weight), rows, C, eps,
                                                                  row_map(group, stride, C));
}

template <typename S>
void launch_backward(void* dinp, void* dweight, const void* dout, const void* inp, const void* weight,
                     const float* rstd, float* scratch, int rows, int C, int group, std::size_t stride,
                     bool accumulate, cudaStream_t s) {
  const RowMap map = row_map(group, stride, C);
  // The weight gradient first: with dinp aliasing dout the input pass overwrites dout.
  int chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
  dim3 grid(blocks_for(C, 256), chunk_grid_y(chunks));
  rmsnorm_backward_partial_kernel<S><<<grid, 256, 0, s>>>(scratch, static_cast<const S*>(dout),
                                                          static_cast<const S*>(inp), rstd, rows, C, map);
  rmsnorm_backward_finish_kernel<S><<<blocks_for(C, 256), 256, 0, s>>>(static_cast<S*>(dweight), scratch, chunks, C);
  const unsigned blocks = row_blocks(rows, kWarpsPerBlock);
  rmsnorm_backward_input_kernel<S><<<blocks, kWarpsPerBlock * 32, 0, s>>>(
      static_cast<S*>(dinp), static_cast<const S*>(dout), static_cast<const S*>(inp), static_cast<const S*>(weight),
      rstd, rows, C, map, accumulate);
}

}  // namespace

void rmsnorm_forward(void* out, float* rstd, const void* inp, const void* weight, int rows, int C, float eps,
                     int group, std::size_t stride, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_forward, out, rstd, inp, weight, rows, C, eps, group, stride, s);
}

void rmsnorm_backward(void* dinp, void* dweight, const void* dout, const void* inp, const void* weight,
                      const float* rstd, float* scratch, int rows, int C, int group, std::size_t stride,
                      bool accumulate, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_backward, dinp, dweight, dout, inp, weight, rstd, scratch, rows, C, group, stride,
                      accumulate, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

void rmsnorm_forward(ComputeContext& ctx, BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows,
                     int C, float eps, RowGroups groups) {
  CudaComputeContext& c = as_cuda(ctx);
  cuda::rmsnorm_forward(out.data, float_data(rstd), inp.data, weight.data, rows, C, eps, groups.group, groups.stride,
                        c.dtype(), c.handle());
}

void rmsnorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                      BufferView weight, BufferView rstd, int rows, int C, RowGroups groups, bool accumulate) {
  CudaComputeContext& c = as_cuda(ctx);
  float* scratch = c.reduction_scratch(cuda::column_sum_scratch_floats(rows, C));
  cuda::rmsnorm_backward(dinp.data, dweight.data, dout.data, inp.data, weight.data, float_data(rstd), scratch, rows, C,
                         groups.group, groups.stride, accumulate, c.dtype(), c.handle());
}
}  // namespace zt::models::ops::on_cuda
