// The CUDA kernels of the Llama family's ops (see kernels.h, llama_ops.h).
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "models/cuda/attention_core.h"
#include "models/cuda/cuda_context.h"
#include "models/cuda/cuda_kernels.h"
#include "models/cuda/gemm.h"
#include "models/cuda/kernels.h"
#include "models/cuda/llama_kernels.h"
#include "models/ops.h"

namespace zt::models {
namespace {

std::size_t sz(int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }
float* f(const BufferView& v) { return static_cast<float*>(v.data); }

}  // namespace

void CudaKernels::token_embedding_forward(BufferView out, BufferView tokens, BufferView wte, int N, int C) {
  cuda::token_embedding_forward(out.data, ops::int32_view(tokens), wte.data, N, C, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::token_embedding_backward(BufferView dwte, BufferView dout, BufferView,
                                           const ops::TokenIndex& index, int, int C) {
  cuda::token_embedding_backward(dwte.data, dout.data, ops::int32_view(index.positions), ops::int32_view(index.starts),
                                 ops::int32_view(index.tokens), index.groups, C, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::rmsnorm_forward(BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows, int C,
                                  float eps, cpu::RowGroups groups) {
  cuda::rmsnorm_forward(out.data, f(rstd), inp.data, weight.data, rows, C, eps, groups.group, groups.stride,
                        ctx_.dtype(), ctx_.handle());
}

void CudaKernels::rmsnorm_backward(BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                                   BufferView weight, BufferView rstd, int rows, int C, cpu::RowGroups groups,
                                   bool accumulate) {
  float* scratch = ctx_.reduction_scratch(cuda::column_sum_scratch_floats(rows, C));
  cuda::rmsnorm_backward(dinp.data, dweight.data, dout.data, inp.data, weight.data, f(rstd), scratch, rows, C,
                         groups.group, groups.stride, accumulate, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::rope(BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
                       bool inverse) {
  if (hs / 2 > cuda::kMaxRopeHalf)
    throw std::invalid_argument(fmt::format("rope: head size {} exceeds the kernel's {}", hs, 2 * cuda::kMaxRopeHalf));
  cuda::rope(x.data, inv_freq.data(), B, T, heads, hs, ld, inverse, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::swiglu_forward(BufferView out, BufferView gu, int N, int I) {
  cuda::swiglu_forward(out.data, gu.data, N, I, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::swiglu_backward(BufferView dgu, BufferView dout, BufferView gu, int N, int I) {
  cuda::swiglu_backward(dgu.data, dout.data, gu.data, N, I, ctx_.dtype(), ctx_.handle());
}

void CudaKernels::gqa_attention_forward(BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B,
                                        int T, int NH, int KV, int hs) {
  const DType dt = ctx_.dtype();
  const int C = NH * hs;
  const std::size_t n = sz(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es, *y = base + 6 * n * es;
  cuda::gqa_split_heads(q, k, v, qkv.data, B, T, NH, KV, hs, dt, ctx_.handle());  // k, v repeated to NH heads
  cuda::attention_core_forward(ctx_, q, k, v, y, att.data, B * NH, T, hs);
  cuda::heads_to_rows(out.data, y, B, T, C, NH, dt, ctx_.handle());  // (B, NH, T, hs) -> (B, T, NH hs)
}

void CudaKernels::gqa_attention_backward(BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                                         BufferView scratch, int B, int T, int NH, int KV, int hs) {
  const DType dt = ctx_.dtype();
  const int C = NH * hs;
  const std::size_t n = sz(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es;
  void *dq = base + 3 * n * es, *dk = base + 4 * n * es, *dv = base + 5 * n * es, *dy = base + 6 * n * es;
  void* datt = base + 7 * n * es;
  cuda::gqa_split_heads(q, k, v, qkv.data, B, T, NH, KV, hs, dt, ctx_.handle());
  cuda::rows_to_heads(dy, dout.data, B, T, C, NH, dt, ctx_.handle());
  cuda::attention_core_backward(ctx_, q, k, v, dy, att.data, datt, dq, dk, dv, B * NH, T, hs);
  cuda::gqa_merge_heads(dqkv.data, dq, dk, dv, B, T, NH, KV, hs, dt, ctx_.handle());  // sums each group's dk, dv
}

}  // namespace zt::models
