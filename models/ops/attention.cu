// GPT-2's causal multi-head attention on the GPU (mirrors attention.cpp). In 16-bit storage with
// hs 64 the flash kernels (models/cuda/flash_attention.h) read q, k and v inside the fused qkv rows
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
#include "models/cuda/shared_kernels.h"

namespace zt::models::ops::on_cuda {
namespace {
std::size_t count(int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Whether forward takes the flash kernels; backward asks the same question of forward's buffers,
// so both passes always take the same path (att means different things on the two). A shape that
// takes them (attention_takes_flash) on views that are not 16-byte aligned takes the materialised
// path, which needs the full att and scratch: the activations, sized for the flash path, are
// always aligned, and views sized for it alone are refused rather than overrun.
bool use_flash(DType dt, int B, int T, int C, int NH, BufferView out, BufferView att, BufferView qkv,
               BufferView scratch) {
  const Device device = out.device;
  if (!attention_takes_flash(device, dt, B, T, C, NH)) return false;
  if (aligned16(out.data) && aligned16(att.data) && aligned16(qkv.data)) return true;
  if (att.numel < count(B * NH, T) * T || scratch.numel < 7 * count(B * T, C) + count(B * NH, T) * T)
    throw std::invalid_argument("attention: views that are not 16-byte aligned take the materialised path, and att "
                                "or scratch is sized for the flash path only");
  return false;
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
    cuda::flash_attention_forward(flash_shape(B, T, C, NH), rows, rows + C * es, rows + 2 * C * es, out.data,
                                  static_cast<float*>(att.data), dt, c.handle());
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
    for (const void* p : {dqkv.data, dout.data, scratch.data})
      if (!aligned16(p))
        throw std::invalid_argument("attention backward: dqkv, dout and scratch must be 16-byte aligned when forward "
                                    "took the flash path");
    auto* rows = static_cast<char*>(qkv.data);
    auto* drows = static_cast<char*>(dqkv.data);
    cuda::flash_attention_backward(flash_shape(B, T, C, NH), rows, rows + C * es, rows + 2 * C * es, out.data,
                                   dout.data, static_cast<const float*>(att.data), reinterpret_cast<float*>(base),
                                   drows, drows + C * es, drows + 2 * C * es, dt, c.handle());
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
