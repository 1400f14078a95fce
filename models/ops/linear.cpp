#include "models/ops/linear.h"

#include <cblas.h>

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "models/cpu/bf16_gemm.h"
#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {

void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int IC, int OC,
                    int ldo) {
  if (bias) {
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) out[static_cast<std::size_t>(n) * ldo + o] = bias[o];
  }
  // out (N, OC) = inp (N, IC) * weight^T (IC, OC) [+ out]
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, IC, 1.0f, inp, IC, weight, IC, bias ? 1.0f : 0.0f, out,
              ldo);
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int IC, int OC, int ldo) {
  if (dinp)  // dinp (N, IC) = dout (N, OC) * weight (OC, IC)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, IC, OC, 1.0f, dout, ldo, weight, IC, 0.0f, dinp, IC);
  if (dweight)  // dweight (OC, IC) += dout^T (OC, N) * inp (N, IC)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, N, 1.0f, dout, ldo, inp, IC, 1.0f, dweight, IC);
  if (dbias)
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) dbias[o] += dout[static_cast<std::size_t>(n) * ldo + o];
}

void set_compute_threads(int threads) {
  threads = threads < 1 ? 1 : threads;
  openblas_set_num_threads(threads);
}
int blas_threads() { return openblas_get_num_threads(); }

namespace {

using ops::detail::sz;

// bf16 storage with native bf16 products (bf16_gemm.h): the operands are read as they are, the
// fp32 products land in a scratch row block and each result is rounded once into its view.
bool all_bf16(std::initializer_list<BufferView> views) {
  for (const BufferView& v : views)
    if (v.numel > 0 && v.dtype != DType::bf16) return false;
  return cpu::bf16_gemm_native();
}
const bf16* bf16_data(const BufferView& v) { return static_cast<const bf16*>(v.data); }

// A scratch fp32 block per thread, grown as needed: no allocation (and no page faults) per call.
float* scratch(std::size_t n) {
  thread_local std::vector<float> block;
  if (block.size() < n) block.resize(n);
  return block.data();
}

void bf16_linear_forward(BufferView out, BufferView inp, BufferView weight, BufferView bias, int N, int IC, int OC,
                         int ldo) {
  float* product = scratch(sz(N, OC));
  cpu::bf16_gemm(false, true, N, OC, IC, bf16_data(inp), IC, bf16_data(weight), IC, product, OC, false,
                 cpu::blas_threads());
  cpu::Fp32Views w;
  const float* b = w.in(bias);  // null without a bias
  auto* rows = static_cast<bf16*>(out.data);
  for (int n = 0; n < N; ++n) {
    float* row = product + sz(n, OC);
    if (b)
      for (int o = 0; o < OC; ++o) row[o] += b[o];
    convert_host(row, DType::f32, rows + sz(n, ldo), DType::bf16, OC);
  }
}

void bf16_linear_backward(BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout, BufferView inp,
                          BufferView weight, int N, int IC, int OC, int ldo) {
  int threads = cpu::blas_threads();
  if (dinp.numel > 0) {
    float* product = scratch(sz(N, IC));
    cpu::bf16_gemm(false, false, N, IC, OC, bf16_data(dout), ldo, bf16_data(weight), IC, product, IC, false, threads);
    convert_host(product, DType::f32, dinp.data, DType::bf16, sz(N, IC));
  }
  cpu::Fp32Views w;  // dweight and dbias accumulate: widened, added to, rounded once
  if (float* dw = w.out(dweight))
    cpu::bf16_gemm(true, false, OC, IC, N, bf16_data(dout), ldo, bf16_data(inp), IC, dw, IC, true, threads);
  if (float* db = w.out(dbias)) {
    float* row = scratch(OC);
    for (int n = 0; n < N; ++n) {
      convert_host(bf16_data(dout) + sz(n, ldo), DType::bf16, row, DType::f32, OC);
      for (int o = 0; o < OC; ++o) db[o] += row[o];
    }
  }
  w.store();
}

}  // namespace

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

void linear_forward(ComputeContext& ctx, BufferView out, BufferView inp, BufferView weight, BufferView bias, int N,
                    int IC, int OC, int ldo) {
  check_act(ctx, out, sz(N - 1, ldo) + OC, "linear out");
  check_act(ctx, inp, sz(N, IC), "linear inp");
  check_act(ctx, weight, sz(OC, IC), "linear weight");
  if (bias.numel > 0) check_act(ctx, bias, OC, "linear bias");
  if (ctx.device().is_cuda()) return on_cuda::linear_forward(ctx, out, inp, weight, bias, N, IC, OC, ldo);
  if (cpu::all_bf16({out, inp, weight, bias})) return cpu::bf16_linear_forward(out, inp, weight, bias, N, IC, OC, ldo);
  cpu::Fp32Views w;
  cpu::linear_forward(w.out(out), w.in(inp), w.in(weight), w.in(bias), N, IC, OC, ldo);
  w.store();
}

void linear_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                     BufferView inp, BufferView weight, int N, int IC, int OC, int ldo) {
  check_act(ctx, dout, sz(N - 1, ldo) + OC, "linear dout");
  check_act(ctx, inp, sz(N, IC), "linear inp");
  check_act(ctx, weight, sz(OC, IC), "linear weight");
  if (dweight.numel > 0) check_act(ctx, dweight, sz(OC, IC), "linear dweight");
  if (dinp.numel > 0) check_act(ctx, dinp, sz(N, IC), "linear dinp");
  if (dbias.numel > 0) check_act(ctx, dbias, OC, "linear dbias");
  if (ctx.device().is_cuda())
    return on_cuda::linear_backward(ctx, dinp, dweight, dbias, dout, inp, weight, N, IC, OC, ldo);
  if (cpu::all_bf16({dinp, dweight, dbias, dout, inp, weight}))
    return cpu::bf16_linear_backward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC, ldo);
  cpu::Fp32Views w;
  cpu::linear_backward(w.out(dinp), w.out(dweight), w.out(dbias), w.in(dout), w.in(inp), w.in(weight), N, IC, OC, ldo);
  w.store();
}

}  // namespace zt::models::ops
