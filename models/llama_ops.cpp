#include "models/llama_ops.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "models/layers/gqa_attention.h"
#include "models/layers/rope.h"
#include "models/layers/swiglu.h"
#include "models/layers/token_embedding.h"
#if ZT_HAVE_CUDA
#include "models/cuda/cuda_context.h"
#include "models/cuda/gemm.h"
#include "models/cuda/kernels.h"
#include "models/cuda/llama_kernels.h"
#endif

namespace zt::models::ops {

namespace {

// As in ops.cpp: a view must be on the context's device, of the dtype and at least `numel` long.
void check(const ComputeContext& ctx, const BufferView& v, DType dtype, std::size_t numel, const char* what) {
  if (!(v.device == ctx.device()))
    throw std::invalid_argument(fmt::format("{}: view on {} given to a {} context", what, v.device.str(),
                                            ctx.device().str()));
  if (dtype_size(v.dtype) != dtype_size(dtype) || (v.dtype != dtype && dtype != DType::f32))
    throw std::invalid_argument(fmt::format("{}: view of dtype {}, expected {}", what, dtype_name(v.dtype),
                                            dtype_name(dtype)));
  if (v.numel < numel)
    throw std::invalid_argument(fmt::format("{}: view of {} elements, needs {}", what, v.numel, numel));
}
void check_act(const ComputeContext& ctx, const BufferView& v, std::size_t numel, const char* what) {
  check(ctx, v, ctx.dtype(), numel, what);
}
std::size_t sz(int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }
float* f(const BufferView& v) { return static_cast<float*>(v.data); }
bool on_cpu(const ComputeContext& ctx) { return ctx.device().is_cpu(); }
// Elements a RowGroups placement of `rows` rows of C spans.
std::size_t span_of(int rows, int C, RowGroups g) { return rows == 0 ? 0 : g.offset(rows - 1, C) + C; }

#if ZT_HAVE_CUDA
cudaStream_t stream_of(ComputeContext& ctx) { return as_cuda(ctx).handle(); }
#else
[[noreturn]] void no_cuda() { throw std::logic_error("CUDA op called in a build without the CUDA backend"); }
#endif

}  // namespace

void token_embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, int N, int C) {
  check_act(ctx, out, sz(N, C), "token_embedding out");
  check(ctx, tokens, DType::f32, N, "token_embedding tokens");
  check_act(ctx, wte, C, "token_embedding wte");
  if (on_cpu(ctx)) return cpu::token_embedding_forward(f(out), int32_view(tokens), f(wte), N, C);
#if ZT_HAVE_CUDA
  cuda::token_embedding_forward(out.data, int32_view(tokens), wte.data, N, C, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void token_embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dout, BufferView tokens,
                              const TokenIndex& index, int N, int C) {
  check_act(ctx, dout, sz(N, C), "token_embedding dout");
  check_act(ctx, dwte, C, "token_embedding dwte");
  if (on_cpu(ctx)) return cpu::token_embedding_backward(f(dwte), f(dout), int32_view(tokens), N, C);
#if ZT_HAVE_CUDA
  cuda::token_embedding_backward(dwte.data, dout.data, int32_view(index.positions), int32_view(index.starts),
                                 int32_view(index.tokens), index.groups, C, ctx.dtype(), stream_of(ctx));
#else
  (void)index;
  no_cuda();
#endif
}

void rmsnorm_forward(ComputeContext& ctx, BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows,
                     int C, float eps, RowGroups groups) {
  check_act(ctx, out, span_of(rows, C, groups), "rmsnorm out");
  check_act(ctx, inp, span_of(rows, C, groups), "rmsnorm inp");
  check(ctx, rstd, DType::f32, rows, "rmsnorm rstd");
  check_act(ctx, weight, C, "rmsnorm weight");
  if (on_cpu(ctx)) return cpu::rmsnorm_forward(f(out), f(rstd), f(inp), f(weight), rows, C, eps, groups);
#if ZT_HAVE_CUDA
  cuda::rmsnorm_forward(out.data, f(rstd), inp.data, weight.data, rows, C, eps, groups.group, groups.stride,
                        ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void rmsnorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                      BufferView weight, BufferView rstd, int rows, int C, RowGroups groups, bool accumulate) {
  check_act(ctx, dinp, span_of(rows, C, groups), "rmsnorm dinp");
  check_act(ctx, dout, span_of(rows, C, groups), "rmsnorm dout");
  check_act(ctx, inp, span_of(rows, C, groups), "rmsnorm inp");
  check(ctx, rstd, DType::f32, rows, "rmsnorm rstd");
  check_act(ctx, weight, C, "rmsnorm weight");
  check_act(ctx, dweight, C, "rmsnorm dweight");
  if (on_cpu(ctx))
    return cpu::rmsnorm_backward(f(dinp), f(dweight), f(dout), f(inp), f(weight), f(rstd), rows, C, groups,
                                 accumulate);
#if ZT_HAVE_CUDA
  float* scratch = as_cuda(ctx).reduction_scratch(cuda::column_sum_scratch_floats(rows, C));
  cuda::rmsnorm_backward(dinp.data, dweight.data, dout.data, inp.data, weight.data, f(rstd), scratch, rows, C,
                         groups.group, groups.stride, accumulate, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void rope(ComputeContext& ctx, BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
          bool inverse) {
  check_act(ctx, x, sz(B * T - 1, ld) + sz(heads, hs), "rope x");
  if (hs % 2 != 0 || inv_freq.size() != static_cast<std::size_t>(hs / 2))
    throw std::invalid_argument(fmt::format("rope: head size {} needs an even size and {} frequencies, got {}", hs,
                                            hs / 2, inv_freq.size()));
  if (on_cpu(ctx)) return cpu::rope_forward(f(x), inv_freq.data(), B, T, heads, hs, ld, inverse);
#if ZT_HAVE_CUDA
  if (hs / 2 > cuda::kMaxRopeHalf)
    throw std::invalid_argument(fmt::format("rope: head size {} exceeds the kernel's {}", hs, 2 * cuda::kMaxRopeHalf));
  cuda::rope(x.data, inv_freq.data(), B, T, heads, hs, ld, inverse, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void swiglu_forward(ComputeContext& ctx, BufferView out, BufferView gu, int N, int I) {
  check_act(ctx, out, sz(N, I), "swiglu out");
  check_act(ctx, gu, sz(N, 2 * I), "swiglu gu");
  if (on_cpu(ctx)) return cpu::swiglu_forward(f(out), f(gu), N, I);
#if ZT_HAVE_CUDA
  cuda::swiglu_forward(out.data, gu.data, N, I, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void swiglu_backward(ComputeContext& ctx, BufferView dgu, BufferView dout, BufferView gu, int N, int I) {
  check_act(ctx, dgu, sz(N, 2 * I), "swiglu dgu");
  check_act(ctx, dout, sz(N, I), "swiglu dout");
  check_act(ctx, gu, sz(N, 2 * I), "swiglu gu");
  if (on_cpu(ctx)) return cpu::swiglu_backward(f(dgu), f(dout), f(gu), N, I);
#if ZT_HAVE_CUDA
  cuda::swiglu_backward(dgu.data, dout.data, gu.data, N, I, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

std::size_t gqa_attention_scratch_numel(Device device, int B, int T, int NH, int KV, int hs) {
  (void)KV;
  if (device.is_cpu()) return sz(T, T);
  // q, k, v (k and v repeated to NH heads) and dq, dk, dv (B, NH, T, hs) each, y/dy (B, NH, T, hs),
  // datt (B, NH, T, T)
  return 7 * sz(B * T, NH * hs) + sz(B * NH, T) * T;
}

namespace {
void check_gqa(const ComputeContext& ctx, BufferView att, BufferView qkv, BufferView scratch, int B, int T, int NH,
               int KV, int hs) {
  if (KV < 1 || NH % KV != 0)
    throw std::invalid_argument(fmt::format("gqa attention: {} key/value heads do not divide {} heads", KV, NH));
  check_act(ctx, att, sz(B * NH, T) * T, "gqa attention att");
  check_act(ctx, qkv, sz(B * T, (NH + 2 * KV) * hs), "gqa attention qkv");
  check_act(ctx, scratch, gqa_attention_scratch_numel(ctx.device(), B, T, NH, KV, hs), "gqa attention scratch");
}
}  // namespace

void gqa_attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch,
                           int B, int T, int NH, int KV, int hs) {
  check_gqa(ctx, att, qkv, scratch, B, T, NH, KV, hs);
  check_act(ctx, out, sz(B * T, NH * hs), "gqa attention out");
  if (on_cpu(ctx)) return cpu::gqa_attention_forward(f(out), f(att), f(qkv), B, T, NH, KV, hs);
#if ZT_HAVE_CUDA
  auto& cc = as_cuda(ctx);
  DType dt = ctx.dtype();
  const int C = NH * hs;
  std::size_t n = sz(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es, *y = base + 6 * n * es;
  cuda::gqa_split_heads(q, k, v, qkv.data, B, T, NH, KV, hs, dt, cc.handle());
  cuda::GemmArgs s;  // att (T, T) = q (T, hs) k^T / sqrt(hs), per (b, h)
  s.trans_b = true;
  s.M = T, s.N = T, s.K = hs, s.alpha = 1.0f / std::sqrt(static_cast<float>(hs));
  s.A = q, s.lda = hs, s.stride_a = sz(T, hs), s.B = k, s.ldb = hs, s.stride_b = sz(T, hs);
  s.C = att.data, s.ldc = T, s.stride_c = sz(T, T), s.batch = B * NH;
  cuda::gemm(cc, s);
  cuda::causal_softmax_forward(att.data, B * NH * T, T, dt, cc.handle());
  cuda::GemmArgs o;  // y (T, hs) = att (T, T) v (T, hs)
  o.M = T, o.N = hs, o.K = T;
  o.A = att.data, o.lda = T, o.stride_a = sz(T, T), o.B = v, o.ldb = hs, o.stride_b = sz(T, hs);
  o.C = y, o.ldc = hs, o.stride_c = sz(T, hs), o.batch = B * NH;
  cuda::gemm(cc, o);
  cuda::heads_to_rows(out.data, y, B, T, C, NH, dt, cc.handle());  // (B, NH, T, hs) -> (B, T, NH hs)
#else
  no_cuda();
#endif
}

void gqa_attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                            BufferView scratch, int B, int T, int NH, int KV, int hs) {
  check_gqa(ctx, att, qkv, scratch, B, T, NH, KV, hs);
  check_act(ctx, dqkv, sz(B * T, (NH + 2 * KV) * hs), "gqa attention dqkv");
  check_act(ctx, dout, sz(B * T, NH * hs), "gqa attention dout");
  if (on_cpu(ctx)) return cpu::gqa_attention_backward(f(dqkv), f(scratch), f(dout), f(qkv), f(att), B, T, NH, KV, hs);
#if ZT_HAVE_CUDA
  auto& cc = as_cuda(ctx);
  DType dt = ctx.dtype();
  const int C = NH * hs;
  std::size_t n = sz(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es;
  void *dq = base + 3 * n * es, *dk = base + 4 * n * es, *dv = base + 5 * n * es, *dy = base + 6 * n * es;
  void* datt = base + 7 * n * es;
  long long sth = sz(T, hs), stt = sz(T, T);
  float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  cuda::gqa_split_heads(q, k, v, qkv.data, B, T, NH, KV, hs, dt, cc.handle());
  cuda::rows_to_heads(dy, dout.data, B, T, C, NH, dt, cc.handle());
  auto batched = [&](bool ta, bool tb, int M, int N, int K, float alpha, const void* A, int lda, long long sa,
                     const void* Bm, int ldb, long long sb, void* Cm, int ldc, long long sc) {
    cuda::GemmArgs g;
    g.trans_a = ta, g.trans_b = tb, g.M = M, g.N = N, g.K = K, g.alpha = alpha;
    g.A = A, g.lda = lda, g.stride_a = sa, g.B = Bm, g.ldb = ldb, g.stride_b = sb, g.C = Cm, g.ldc = ldc,
    g.stride_c = sc, g.batch = B * NH;
    cuda::gemm(cc, g);
  };
  batched(false, true, T, T, hs, 1.0f, dy, hs, sth, v, hs, sth, datt, T, stt);       // datt = dy v^T
  batched(true, false, T, hs, T, 1.0f, att.data, T, stt, dy, hs, sth, dv, hs, sth);  // dv = att^T dy (per head)
  cuda::causal_softmax_backward(datt, att.data, B * NH * T, T, dt, cc.handle());
  batched(false, false, T, hs, T, scale, datt, T, stt, k, hs, sth, dq, hs, sth);  // dq = dpre k
  batched(true, false, T, hs, T, scale, datt, T, stt, q, hs, sth, dk, hs, sth);   // dk = dpre^T q (per head)
  cuda::gqa_merge_heads(dqkv.data, dq, dk, dv, B, T, NH, KV, hs, dt, cc.handle());  // sums each group's dk, dv
#else
  no_cuda();
#endif
}

}  // namespace zt::models::ops
