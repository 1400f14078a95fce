// GPT-2's causal multi-head attention on the GPU (mirrors attention.cpp). In 16-bit storage with
// hs 64 cuDNN's fused attention or the flash kernels (models/cuda/fused_attention.h) read q, k and
// v inside the fused qkv rows
// and write the output rows directly: no (T, T) matrix, no permutes; att then holds the rows'
// softmax statistics. Otherwise q, k and v are split out into heads, the products and causal
// softmax are shared with grouped-query attention (models/cuda/attention_core.h), and the heads
// are merged back into rows.
#include "models/ops/attention.h"

#include <cstdint>
#include <stdexcept>

#include "models/cuda/attention_core.h"
#include "models/cuda/cuda_context.h"
#include "models/cuda/flash_attention.h"
#include "models/cuda/fused_attention.h"
#include "models/cuda/shared_kernels.h"

namespace zt::models::ops::on_cuda {
namespace {
std::size_t count(int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }

// Whether this call takes the flash kernels (cuda::flash_attention_runs says why views matter).
bool use_flash(DType dt, int B, int T, int C, int NH, BufferView out, BufferView att, BufferView qkv,
               BufferView scratch) {
  return attention_takes_flash(out.device, dt, B, T, C, NH) &&
         cuda::flash_attention_runs({out.data, att.data, qkv.data}, att.numel, scratch.numel, count(B * NH, T) * T,
                                    7 * count(B * T, C) + count(B * NH, T) * T, "attention");
}

// (b, h, t, d) inside rows of `width` elements per token, head h at column offset + h*hs.
cuda::HeadsLayout rows_layout(int T, int width, int hs) {
  return {static_cast<std::int64_t>(T) * width, hs, width};
}

cuda::FlashAttention flash_shape(int B, int T, int C, int NH) {
  cuda::FlashAttention a;
  a.B = B, a.NH = NH, a.T = T;
  a.q = a.k = a.v = rows_layout(T, 3 * C, C / NH);
  a.y = rows_layout(T, C, C / NH);
  return a;
}
}  // namespace

void attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B,
                       int T, int C, int NH) {
  CudaComputeContext& c = as_cuda(ctx);
  const DType dt = c.dtype();
  const std::size_t n = count(B * T, C), es = dtype_size(dt);
  if (use_flash(dt, B, T, C, NH, out, att, qkv, scratch)) {
    auto* rows = static_cast<char*>(qkv.data);
    cuda::fused_attention_forward(c, flash_shape(B, T, C, NH), rows, rows + C * es, rows + 2 * C * es, out.data,
                                  static_cast<float*>(att.data));
    return;
  }
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es, *y = base + 6 * n * es;
  cuda::split_heads(q, k, v, qkv.data, B, T, C, NH, dt, c.handle());
  cuda::attention_core_forward(c, q, k, v, y, att.data, B * NH, T, C / NH);
  cuda::heads_to_rows(out.data, y, B, T, C, NH, dt, c.handle());
}

void attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView out,
                        BufferView att, BufferView scratch, int B, int T, int C, int NH) {
  CudaComputeContext& c = as_cuda(ctx);
  const DType dt = c.dtype();
  const std::size_t n = count(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  if (use_flash(dt, B, T, C, NH, out, att, qkv, scratch)) {
    // Forward took the flash path: att holds statistics, so backward must take it too.
    cuda::require_flash_backward_aligned({dqkv.data, dout.data, scratch.data}, "attention");
    auto* rows = static_cast<char*>(qkv.data);
    auto* drows = static_cast<char*>(dqkv.data);
    cuda::fused_attention_backward(c, flash_shape(B, T, C, NH), rows, rows + C * es, rows + 2 * C * es, out.data,
                                   dout.data, static_cast<const float*>(att.data), reinterpret_cast<float*>(base),
                                   drows, drows + C * es, drows + 2 * C * es);
    return;
  }
  void *q = base, *k = base + n * es, *v = base + 2 * n * es;
  void *dq = base + 3 * n * es, *dk = base + 4 * n * es, *dv = base + 5 * n * es, *dy = base + 6 * n * es;
  void* datt = base + 7 * n * es;
  cuda::split_heads(q, k, v, qkv.data, B, T, C, NH, dt, c.handle());
  cuda::rows_to_heads(dy, dout.data, B, T, C, NH, dt, c.handle());
  cuda::attention_core_backward(c, q, k, v, dy, att.data, datt, dq, dk, dv, B * NH, T, C / NH);
  cuda::merge_heads(dqkv.data, dq, dk, dv, B, T, C, NH, dt, c.handle());
}

}  // namespace zt::models::ops::on_cuda
