// Grouped-query attention on the GPU (mirrors gqa_attention.cpp). In bf16/fp16 with hs 64 cuDNN's
// fused attention or the flash kernels (models/cuda/fused_attention.h) read q, k and v inside the
// qkv rows, each key/value head serving its group of query heads, and sum dk and dv over the group
// without atomics. Otherwise its
// own head permutes (k and v repeated over each group of query heads, and their gradients summed
// back) around the products and causal softmax it shares with GPT-2's attention
// (models/cuda/attention_core.h).
#include "models/ops/gqa_attention.h"

#include <cstdint>

#include "models/cuda/attention_core.h"
#include "models/cuda/cuda_context.h"
#include "models/cuda/flash_attention.h"
#include "models/cuda/fused_attention.h"
#include "models/cuda/shared_kernels.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

// One thread per element of a (B, NH, T, hs) tensor: q from the query columns, k and v from the
// columns of kv head h / (NH / KV) (repeated over the group).
template <typename S>
__global__ void gqa_split_kernel(S* q, S* k, S* v, const S* qkv, int T, int NH, int KV, int hs, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int d = static_cast<int>(i % hs);
  std::size_t r = i / hs;
  const int t = static_cast<int>(r % T);
  r /= T;
  const int h = static_cast<int>(r % NH);
  const std::size_t b = r / NH;
  const int ld = (NH + 2 * KV) * hs, kvh = h / (NH / KV);
  const S* row = qkv + (b * T + t) * ld;
  q[i] = row[h * hs + d];
  k[i] = row[(NH + kvh) * hs + d];
  v[i] = row[(NH + KV + kvh) * hs + d];
}

// One thread per element of a qkv row block (B, T, W): dq copied from its head; dk and dv summed
// over the NH / KV heads of the group in head order.
template <typename S>
__global__ void gqa_merge_kernel(S* dqkv, const S* dq, const S* dk, const S* dv, int T, int NH, int KV, int hs,
                                 std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int ld = (NH + 2 * KV) * hs, group = NH / KV;
  const int col = static_cast<int>(i % ld);
  const std::size_t bt = i / ld;
  const int t = static_cast<int>(bt % T);
  const std::size_t b = bt / T;
  const int head = col / hs, d = col % hs;
  auto at = [&](int h) { return ((b * NH + h) * T + t) * hs + d; };  // (B, NH, T, hs)
  if (head < NH) {
    dqkv[i] = dq[at(head)];
    return;
  }
  const bool is_k = head < NH + KV;
  const int kvh = is_k ? head - NH : head - NH - KV;
  const S* src = is_k ? dk : dv;
  float acc = 0.0f;
  for (int h = kvh * group; h < (kvh + 1) * group; ++h) acc += load(src + at(h));
  store(dqkv + i, acc);
}

template <typename S>
void launch_split(void* q, void* k, void* v, const void* qkv, int B, int T, int NH, int KV, int hs, cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(B) * NH * T * hs;
  gqa_split_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(q), static_cast<S*>(k),
                                                                   static_cast<S*>(v), static_cast<const S*>(qkv), T,
                                                                   NH, KV, hs, n);
}

template <typename S>
void launch_merge(void* dqkv, const void* dq, const void* dk, const void* dv, int B, int T, int NH, int KV, int hs,
                  cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(B) * T * (NH + 2 * KV) * hs;
  gqa_merge_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(dqkv), static_cast<const S*>(dq),
                                                                   static_cast<const S*>(dk),
                                                                   static_cast<const S*>(dv), T, NH, KV, hs, n);
}

}  // namespace

void gqa_split_heads(void* q, void* k, void* v, const void* qkv, int B, int T, int NH, int KV, int hs, DType dt,
                     cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_split, q, k, v, qkv, B, T, NH, KV, hs, s);
}

void gqa_merge_heads(void* dqkv, const void* dq, const void* dk, const void* dv, int B, int T, int NH, int KV, int hs,
                     DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_merge, dqkv, dq, dk, dv, B, T, NH, KV, hs, s);
}

}  // namespace zt::models::cuda

namespace zt::models::ops::on_cuda {

namespace {
std::size_t count(int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }

// Whether this call takes the flash kernels (cuda::flash_attention_runs says why views matter).
bool use_flash(DType dt, int B, int T, int NH, int KV, int hs, BufferView out, BufferView att, BufferView qkv,
               BufferView scratch) {
  return gqa_attention_takes_flash(out.device, dt, B, T, NH, KV, hs) &&
         cuda::flash_attention_runs({out.data, att.data, qkv.data}, att.numel, scratch.numel, count(B * NH, T) * T,
                                    7 * count(B * T, NH * hs) + count(B * NH, T) * T, "gqa attention");
}

// q heads h, k and v heads h / (NH / KV), all inside qkv rows of (NH + 2 KV) hs elements: q at
// column 0, k at NH hs, v at (NH + KV) hs; y rows of NH hs.
cuda::FlashAttention flash_shape(int B, int T, int NH, int KV, int hs) {
  cuda::FlashAttention a;
  a.B = B, a.NH = NH, a.T = T, a.group = NH / KV;
  const std::int64_t width = static_cast<std::int64_t>(NH + 2 * KV) * hs;
  a.q = a.k = a.v = {T * width, hs, width};
  a.y = {static_cast<std::int64_t>(T) * NH * hs, hs, static_cast<std::int64_t>(NH) * hs};
  return a;
}
}  // namespace

void gqa_attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch,
                           int B, int T, int NH, int KV, int hs) {
  CudaComputeContext& c = as_cuda(ctx);
  const DType dt = c.dtype();
  const int C = NH * hs;
  const std::size_t n = count(B * T, C), es = dtype_size(dt);
  if (use_flash(dt, B, T, NH, KV, hs, out, att, qkv, scratch)) {
    auto* rows = static_cast<char*>(qkv.data);
    cuda::fused_attention_forward(c, flash_shape(B, T, NH, KV, hs), rows, rows + NH * hs * es,
                                  rows + (NH + KV) * hs * es, out.data, static_cast<float*>(att.data));
    return;
  }
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es, *y = base + 6 * n * es;
  cuda::gqa_split_heads(q, k, v, qkv.data, B, T, NH, KV, hs, dt, c.handle());  // k, v repeated to NH heads
  cuda::attention_core_forward(c, q, k, v, y, att.data, B * NH, T, hs);
  cuda::heads_to_rows(out.data, y, B, T, C, NH, dt, c.handle());  // (B, NH, T, hs) -> (B, T, NH hs)
}

void gqa_attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView out,
                            BufferView att, BufferView scratch, int B, int T, int NH, int KV, int hs) {
  CudaComputeContext& c = as_cuda(ctx);
  const DType dt = c.dtype();
  const int C = NH * hs;
  const std::size_t n = count(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  if (use_flash(dt, B, T, NH, KV, hs, out, att, qkv, scratch)) {
    // Forward took the flash path: att holds statistics, so backward must take it too.
    cuda::require_flash_backward_aligned({dqkv.data, dout.data, scratch.data}, "gqa attention");
    auto* rows = static_cast<char*>(qkv.data);
    auto* drows = static_cast<char*>(dqkv.data);
    const std::size_t k_at = NH * hs * es, v_at = (NH + KV) * hs * es;
    cuda::fused_attention_backward(c, flash_shape(B, T, NH, KV, hs), rows, rows + k_at, rows + v_at, out.data,
                                   dout.data, static_cast<const float*>(att.data), reinterpret_cast<float*>(base),
                                   drows, drows + k_at, drows + v_at);
    return;
  }
  void *q = base, *k = base + n * es, *v = base + 2 * n * es;
  void *dq = base + 3 * n * es, *dk = base + 4 * n * es, *dv = base + 5 * n * es, *dy = base + 6 * n * es;
  void* datt = base + 7 * n * es;
  cuda::gqa_split_heads(q, k, v, qkv.data, B, T, NH, KV, hs, dt, c.handle());
  cuda::rows_to_heads(dy, dout.data, B, T, C, NH, dt, c.handle());
  cuda::attention_core_backward(c, q, k, v, dy, att.data, datt, dq, dk, dv, B * NH, T, hs);
  cuda::gqa_merge_heads(dqkv.data, dq, dk, dv, B, T, NH, KV, hs, dt, c.handle());  // sums each group's dk, dv
}
}  // namespace zt::models::ops::on_cuda
