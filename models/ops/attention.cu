// GPT-2's causal multi-head attention on the GPU (mirrors attention.cpp): q, k and v split out
// of the fused qkv rows into heads, the products and causal softmax shared with grouped-query
// attention (models/cuda/attention_core.h), and the heads merged back into rows.
#include "models/ops/attention.h"

#include "models/cuda/attention_core.h"
#include "models/cuda/cuda_context.h"
#include "models/cuda/shared_kernels.h"

namespace zt::models::ops::on_cuda {
namespace {
std::size_t count(int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }
}  // namespace

void attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B,
                       int T, int C, int NH) {
  CudaComputeContext& c = as_cuda(ctx);
  const DType dt = c.dtype();
  const std::size_t n = count(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es, *y = base + 6 * n * es;
  cuda::split_heads(q, k, v, qkv.data, B, T, C, NH, dt, c.handle());
  cuda::attention_core_forward(c, q, k, v, y, att.data, B * NH, T, C / NH);
  cuda::heads_to_rows(out.data, y, B, T, C, NH, dt, c.handle());
}

void attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                        BufferView scratch, int B, int T, int C, int NH) {
  CudaComputeContext& c = as_cuda(ctx);
  const DType dt = c.dtype();
  const std::size_t n = count(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es;
  void *dq = base + 3 * n * es, *dk = base + 4 * n * es, *dv = base + 5 * n * es, *dy = base + 6 * n * es;
  void* datt = base + 7 * n * es;
  cuda::split_heads(q, k, v, qkv.data, B, T, C, NH, dt, c.handle());
  cuda::rows_to_heads(dy, dout.data, B, T, C, NH, dt, c.handle());
  cuda::attention_core_backward(c, q, k, v, dy, att.data, datt, dq, dk, dv, B * NH, T, C / NH);
  cuda::merge_heads(dqkv.data, dq, dk, dv, B, T, C, NH, dt, c.handle());
}

}  // namespace zt::models::ops::on_cuda
