#include "models/ops.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "models/layers/attention.h"
#include "models/layers/embedding.h"
#include "models/layers/gelu.h"
#include "models/layers/layernorm.h"
#include "models/layers/linear.h"
#include "models/layers/residual.h"
#include "models/layers/softmax_xent.h"
#if ZT_HAVE_CUDA
#include "models/cuda/cuda_context.h"
#include "models/cuda/gemm.h"
#include "models/cuda/kernels.h"
#include "runtime/core/cuda/cuda_check.h"
#endif

namespace zt::models::ops {

namespace {

// Checks that a view is on the context's device, of the dtype and at least `numel` elements.
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

#if ZT_HAVE_CUDA
cudaStream_t stream_of(ComputeContext& ctx) { return as_cuda(ctx).handle(); }
#else
[[noreturn]] void no_cuda() { throw std::logic_error("CUDA op called in a build without the CUDA backend"); }
#endif

}  // namespace

std::int32_t* int32_view(const BufferView& view) {
  if (dtype_size(view.dtype) != 4) throw std::invalid_argument("int32 data needs a 4-byte buffer");
  return static_cast<std::int32_t*>(view.data);
}

void embedding_forward(ComputeContext& ctx, BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B,
                       int T, int C) {
  check_act(ctx, out, sz(B * T, C), "embedding out");
  check(ctx, tokens, DType::f32, sz(B, T), "embedding tokens");
  check_act(ctx, wpe, sz(T, C), "embedding wpe");
  check_act(ctx, wte, C, "embedding wte");
  if (on_cpu(ctx)) return cpu::embedding_forward(f(out), int32_view(tokens), f(wte), f(wpe), B, T, C);
#if ZT_HAVE_CUDA
  cuda::embedding_forward(out.data, int32_view(tokens), wte.data, wpe.data, B, T, C, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void embedding_backward(ComputeContext& ctx, BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                        const TokenIndex& index, int B, int T, int C) {
  check_act(ctx, dout, sz(B * T, C), "embedding dout");
  check_act(ctx, dwpe, sz(T, C), "embedding dwpe");
  check_act(ctx, dwte, C, "embedding dwte");
  if (on_cpu(ctx)) return cpu::embedding_backward(f(dwte), f(dwpe), f(dout), int32_view(tokens), B, T, C);
#if ZT_HAVE_CUDA
  cuda::embedding_backward(dwte.data, dwpe.data, dout.data, int32_view(index.positions), int32_view(index.starts),
                           int32_view(index.tokens), index.groups, B, T, C, ctx.dtype(), stream_of(ctx));
#else
  (void)index;
  no_cuda();
#endif
}

void layernorm_forward(ComputeContext& ctx, BufferView out, BufferView mean, BufferView rstd, BufferView inp,
                       BufferView weight, BufferView bias, int N, int C) {
  check_act(ctx, out, sz(N, C), "layernorm out");
  check_act(ctx, inp, sz(N, C), "layernorm inp");
  check(ctx, mean, DType::f32, N, "layernorm mean");
  check(ctx, rstd, DType::f32, N, "layernorm rstd");
  check_act(ctx, weight, C, "layernorm weight");
  check_act(ctx, bias, C, "layernorm bias");
  if (on_cpu(ctx)) return cpu::layernorm_forward(f(out), f(mean), f(rstd), f(inp), f(weight), f(bias), N, C);
#if ZT_HAVE_CUDA
  cuda::layernorm_forward(out.data, f(mean), f(rstd), inp.data, weight.data, bias.data, N, C, ctx.dtype(),
                          stream_of(ctx));
#else
  no_cuda();
#endif
}

void layernorm_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                        BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N, int C) {
  check_act(ctx, dinp, sz(N, C), "layernorm dinp");
  check_act(ctx, dout, sz(N, C), "layernorm dout");
  check_act(ctx, inp, sz(N, C), "layernorm inp");
  check_act(ctx, dweight, C, "layernorm dweight");
  check_act(ctx, dbias, C, "layernorm dbias");
  if (on_cpu(ctx))
    return cpu::layernorm_backward(f(dinp), f(dweight), f(dbias), f(dout), f(inp), f(weight), f(mean), f(rstd), N, C);
#if ZT_HAVE_CUDA
  float* scratch = as_cuda(ctx).reduction_scratch(cuda::column_sum_scratch_floats(N, 2 * C));
  cuda::layernorm_backward(dinp.data, dweight.data, dbias.data, dout.data, inp.data, weight.data, f(mean), f(rstd),
                           scratch, N, C, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void linear_forward(ComputeContext& ctx, BufferView out, BufferView inp, BufferView weight, BufferView bias, int N,
                    int IC, int OC, int ldo) {
  check_act(ctx, out, sz(N - 1, ldo) + OC, "linear out");
  check_act(ctx, inp, sz(N, IC), "linear inp");
  check_act(ctx, weight, sz(OC, IC), "linear weight");
  bool has_bias = bias.numel > 0;
  if (has_bias) check_act(ctx, bias, OC, "linear bias");
  if (on_cpu(ctx))
    return cpu::linear_forward(f(out), f(inp), f(weight), has_bias ? f(bias) : nullptr, N, IC, OC, ldo);
#if ZT_HAVE_CUDA
  auto& cc = as_cuda(ctx);
  // out (N, OC) = inp (N, IC) weight^T (IC, OC)
  cuda::GemmArgs g;
  g.trans_b = true;
  g.M = N, g.N = OC, g.K = IC;
  g.A = inp.data, g.lda = IC, g.B = weight.data, g.ldb = IC, g.C = out.data, g.ldc = ldo;
  cuda::gemm(cc, g);
  if (has_bias) cuda::bias_forward(out.data, bias.data, N, OC, ldo, ctx.dtype(), cc.handle());
#else
  no_cuda();
#endif
}

void linear_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                     BufferView inp, BufferView weight, int N, int IC, int OC, int ldo, bool accumulate_dinp) {
  check_act(ctx, dout, sz(N - 1, ldo) + OC, "linear dout");
  check_act(ctx, inp, sz(N, IC), "linear inp");
  check_act(ctx, weight, sz(OC, IC), "linear weight");
  check_act(ctx, dweight, sz(OC, IC), "linear dweight");
  bool has_dinp = dinp.numel > 0, has_dbias = dbias.numel > 0;
  if (has_dinp) check_act(ctx, dinp, sz(N, IC), "linear dinp");
  if (has_dbias) check_act(ctx, dbias, OC, "linear dbias");
  if (on_cpu(ctx))
    return cpu::linear_backward(has_dinp ? f(dinp) : nullptr, f(dweight), has_dbias ? f(dbias) : nullptr, f(dout),
                                f(inp), f(weight), N, IC, OC, ldo, accumulate_dinp);
#if ZT_HAVE_CUDA
  auto& cc = as_cuda(ctx);
  if (has_dinp) {  // dinp (N, IC) = dout (N, OC) weight (OC, IC)
    cuda::GemmArgs g;
    g.M = N, g.N = IC, g.K = OC;
    g.beta = accumulate_dinp ? 1.0f : 0.0f;
    g.A = dout.data, g.lda = ldo, g.B = weight.data, g.ldb = IC, g.C = dinp.data, g.ldc = IC;
    cuda::gemm(cc, g);
  }
  {  // dweight (OC, IC) += dout^T (OC, N) inp (N, IC)
    cuda::GemmArgs g;
    g.trans_a = true;
    g.M = OC, g.N = IC, g.K = N;
    g.beta = 1.0f;
    g.A = dout.data, g.lda = ldo, g.B = inp.data, g.ldb = IC, g.C = dweight.data, g.ldc = IC;
    cuda::gemm(cc, g);
  }
  if (has_dbias)
    cuda::bias_backward(dbias.data, dout.data, cc.reduction_scratch(cuda::column_sum_scratch_floats(N, OC)), N, OC,
                        ldo, ctx.dtype(), cc.handle());
#else
  no_cuda();
#endif
}

void gelu_forward(ComputeContext& ctx, BufferView out, BufferView inp) {
  check_act(ctx, out, inp.numel, "gelu out");
  check_act(ctx, inp, inp.numel, "gelu inp");
  if (on_cpu(ctx)) return cpu::gelu_forward(f(out), f(inp), inp.numel);
#if ZT_HAVE_CUDA
  cuda::gelu_forward(out.data, inp.data, inp.numel, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void gelu_backward(ComputeContext& ctx, BufferView dinp, BufferView inp, BufferView dout) {
  check_act(ctx, dinp, inp.numel, "gelu dinp");
  check_act(ctx, dout, inp.numel, "gelu dout");
  check_act(ctx, inp, inp.numel, "gelu inp");
  if (on_cpu(ctx)) return cpu::gelu_backward(f(dinp), f(inp), f(dout), inp.numel);
#if ZT_HAVE_CUDA
  cuda::gelu_backward(dinp.data, inp.data, dout.data, inp.numel, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void residual_forward(ComputeContext& ctx, BufferView out, BufferView a, BufferView b) {
  check_act(ctx, out, a.numel, "residual out");
  check_act(ctx, a, a.numel, "residual a");
  check_act(ctx, b, a.numel, "residual b");
  if (on_cpu(ctx)) return cpu::residual_forward(f(out), f(a), f(b), a.numel);
#if ZT_HAVE_CUDA
  cuda::residual_forward(out.data, a.data, b.data, a.numel, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

std::size_t attention_scratch_numel(Device device, int B, int T, int C, int NH) {
  if (device.is_cpu()) return sz(T, T);
  // q, k, v and dq, dk, dv (B, NH, T, hs) each, y/dy (B, NH, T, hs), datt (B, NH, T, T)
  return 7 * sz(B * T, C) + sz(B * NH, T) * T;
}

void attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B,
                       int T, int C, int NH) {
  check_act(ctx, out, sz(B * T, C), "attention out");
  check_act(ctx, att, sz(B * NH, T) * T, "attention att");
  check_act(ctx, qkv, sz(B * T, 3 * C), "attention qkv");
  check_act(ctx, scratch, attention_scratch_numel(ctx.device(), B, T, C, NH), "attention scratch");
  if (on_cpu(ctx)) return cpu::attention_forward(f(out), f(att), f(qkv), B, T, C, NH);
#if ZT_HAVE_CUDA
  auto& cc = as_cuda(ctx);
  DType dt = ctx.dtype();
  std::size_t n = sz(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es, *y = base + 6 * n * es;
  int hs = C / NH;
  cuda::split_heads(q, k, v, qkv.data, B, T, C, NH, dt, cc.handle());
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
  cuda::heads_to_rows(out.data, y, B, T, C, NH, dt, cc.handle());
#else
  no_cuda();
#endif
}

void attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                        BufferView scratch, int B, int T, int C, int NH) {
  check_act(ctx, dqkv, sz(B * T, 3 * C), "attention dqkv");
  check_act(ctx, dout, sz(B * T, C), "attention dout");
  check_act(ctx, att, sz(B * NH, T) * T, "attention att");
  check_act(ctx, qkv, sz(B * T, 3 * C), "attention qkv");
  check_act(ctx, scratch, attention_scratch_numel(ctx.device(), B, T, C, NH), "attention scratch");
  if (on_cpu(ctx)) return cpu::attention_backward(f(dqkv), f(scratch), f(dout), f(qkv), f(att), B, T, C, NH);
#if ZT_HAVE_CUDA
  auto& cc = as_cuda(ctx);
  DType dt = ctx.dtype();
  std::size_t n = sz(B * T, C), es = dtype_size(dt);
  auto* base = static_cast<char*>(scratch.data);
  void *q = base, *k = base + n * es, *v = base + 2 * n * es;
  void *dq = base + 3 * n * es, *dk = base + 4 * n * es, *dv = base + 5 * n * es, *dy = base + 6 * n * es;
  void* datt = base + 7 * n * es;
  int hs = C / NH;
  long long sth = sz(T, hs), stt = sz(T, T);
  float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  cuda::split_heads(q, k, v, qkv.data, B, T, C, NH, dt, cc.handle());
  cuda::rows_to_heads(dy, dout.data, B, T, C, NH, dt, cc.handle());
  auto batched = [&](bool ta, bool tb, int M, int N, int K, float alpha, const void* A, int lda, long long sa,
                     const void* Bm, int ldb, long long sb, void* Cm, int ldc, long long sc) {
    cuda::GemmArgs g;
    g.trans_a = ta, g.trans_b = tb, g.M = M, g.N = N, g.K = K, g.alpha = alpha;
    g.A = A, g.lda = lda, g.stride_a = sa, g.B = Bm, g.ldb = ldb, g.stride_b = sb, g.C = Cm, g.ldc = ldc,
    g.stride_c = sc, g.batch = B * NH;
    cuda::gemm(cc, g);
  };
  batched(false, true, T, T, hs, 1.0f, dy, hs, sth, v, hs, sth, datt, T, stt);    // datt = dy v^T
  batched(true, false, T, hs, T, 1.0f, att.data, T, stt, dy, hs, sth, dv, hs, sth);  // dv = att^T dy
  cuda::causal_softmax_backward(datt, att.data, B * NH * T, T, dt, cc.handle());
  batched(false, false, T, hs, T, scale, datt, T, stt, k, hs, sth, dq, hs, sth);  // dq = dpre k
  batched(true, false, T, hs, T, scale, datt, T, stt, q, hs, sth, dk, hs, sth);   // dk = dpre^T q
  cuda::merge_heads(dqkv.data, dq, dk, dv, B, T, C, NH, dt, cc.handle());
#else
  no_cuda();
#endif
}

void softmax_xent_forward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets, int N, int V,
                          int Vp) {
  check(ctx, losses, DType::f32, N, "softmax_xent losses");
  check_act(ctx, logits, sz(N, Vp), "softmax_xent logits");
  check(ctx, targets, DType::f32, N, "softmax_xent targets");
  if (on_cpu(ctx)) {
    cpu::softmax_xent_forward(f(losses), f(logits), int32_view(targets), N, V, Vp);
    return;
  }
#if ZT_HAVE_CUDA
  cuda::softmax_xent_forward(f(losses), logits.data, int32_view(targets), N, V, Vp, ctx.dtype(), stream_of(ctx));
#else
  no_cuda();
#endif
}

void softmax_xent_backward(ComputeContext& ctx, BufferView dlogits, BufferView logits, BufferView targets, float dloss,
                           int N, int V, int Vp) {
  check_act(ctx, dlogits, sz(N, Vp), "softmax_xent dlogits");
  check_act(ctx, logits, sz(N, Vp), "softmax_xent logits");
  check(ctx, targets, DType::f32, N, "softmax_xent targets");
  if (on_cpu(ctx)) return cpu::softmax_xent_backward(f(dlogits), f(logits), int32_view(targets), dloss, N, V, Vp);
#if ZT_HAVE_CUDA
  cuda::softmax_xent_backward(dlogits.data, logits.data, int32_view(targets), dloss, N, V, Vp, ctx.dtype(),
                              stream_of(ctx));
#else
  no_cuda();
#endif
}

void copy(ComputeContext& ctx, BufferView dst, BufferView src) {
  if (dst.bytes() != src.bytes()) throw std::invalid_argument("ops::copy: sizes differ");
  if (on_cpu(ctx)) {
    std::memcpy(dst.data, src.data, src.bytes());
    return;
  }
#if ZT_HAVE_CUDA
  ZT_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, src.bytes(), cudaMemcpyDefault, stream_of(ctx)));
#else
  no_cuda();
#endif
}

void fill_zero(ComputeContext& ctx, BufferView dst) {
  if (on_cpu(ctx)) {
    std::memset(dst.data, 0, dst.bytes());
    return;
  }
#if ZT_HAVE_CUDA
  ZT_CUDA_CHECK(cudaMemsetAsync(dst.data, 0, dst.bytes(), stream_of(ctx)));
#else
  no_cuda();
#endif
}

}  // namespace zt::models::ops
