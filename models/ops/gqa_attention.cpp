#include "models/ops/gqa_attention.h"

#include <cblas.h>
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "models/cpu/fp32_views.h"
#include "models/cuda/flash_attention_rules.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {

void gqa_attention_forward(float* out, float* att, const float* qkv, int B, int T, int NH, int KV, int hs) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const int ld = (NH + 2 * KV) * hs, ldo = NH * hs, group = NH / KV;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      const float* row0 = qkv + static_cast<std::size_t>(b) * T * ld;
      const float* q = row0 + h * hs;
      const float* k = row0 + (NH + h / group) * hs;
      const float* v = row0 + (NH + KV + h / group) * hs;
      float* a = att + (static_cast<std::size_t>(b) * NH + h) * T * T;
      // a (T, T) = scale * q (T, hs) k^T (hs, T); the masked upper triangle is computed and discarded.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, ld, k, ld, 0.0f, a, T);
      for (int i = 0; i < T; ++i) {
        float* row = a + static_cast<std::size_t>(i) * T;
        float m = -std::numeric_limits<float>::infinity();
        for (int j = 0; j <= i; ++j) m = row[j] > m ? row[j] : m;
        float sum = 0.0f;
        for (int j = 0; j <= i; ++j) {
          row[j] = std::exp(row[j] - m);
          sum += row[j];
        }
        const float inv = 1.0f / sum;
        for (int j = 0; j <= i; ++j) row[j] *= inv;
        for (int j = i + 1; j < T; ++j) row[j] = 0.0f;
      }
      // out_h (T, hs) = a (T, T) v (T, hs)
      float* o = out + static_cast<std::size_t>(b) * T * ldo + h * hs;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, v, ld, 0.0f, o, ldo);
    }
}

void gqa_attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                            int T, int NH, int KV, int hs) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const int ld = (NH + 2 * KV) * hs, ldo = NH * hs, group = NH / KV;
  for (int b = 0; b < B; ++b) {
    float* drow0 = dqkv + static_cast<std::size_t>(b) * T * ld;
    // dk and dv sum over the query heads of their group: start from zero, then accumulate.
    for (int t = 0; t < T; ++t)
      for (int c = NH * hs; c < ld; ++c) drow0[static_cast<std::size_t>(t) * ld + c] = 0.0f;
    for (int h = 0; h < NH; ++h) {
      const float* row0 = qkv + static_cast<std::size_t>(b) * T * ld;
      const float* q = row0 + h * hs;
      const float* k = row0 + (NH + h / group) * hs;
      const float* v = row0 + (NH + KV + h / group) * hs;
      float* dq = drow0 + h * hs;
      float* dk = drow0 + (NH + h / group) * hs;
      float* dv = drow0 + (NH + KV + h / group) * hs;
      const float* a = att + (static_cast<std::size_t>(b) * NH + h) * T * T;
      const float* d = dout + static_cast<std::size_t>(b) * T * ldo + h * hs;
      float* da = scratch;
      // da (T, T) = d (T, hs) v^T;  dv (T, hs) += a^T (T, T) d (T, hs)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, d, ldo, v, ld, 0.0f, da, T);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, d, ldo, 1.0f, dv, ld);
      // Softmax backward in place: dpre = a * (da - sum_j a da), zero above the diagonal.
      for (int i = 0; i < T; ++i) {
        const float* arow = a + static_cast<std::size_t>(i) * T;
        float* drow = da + static_cast<std::size_t>(i) * T;
        float dot = 0.0f;
        for (int j = 0; j <= i; ++j) dot += arow[j] * drow[j];
        for (int j = 0; j <= i; ++j) drow[j] = arow[j] * (drow[j] - dot);
        for (int j = i + 1; j < T; ++j) drow[j] = 0.0f;
      }
      // dq = scale * dpre k;  dk += scale * dpre^T q
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, scale, da, T, k, ld, 0.0f, dq, ld);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, scale, da, T, q, ld, 1.0f, dk, ld);
    }
  }
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

bool gqa_attention_takes_flash(Device device, DType dtype, int B, int T, int NH, int KV, int hs) {
  return device.is_cuda() && KV >= 1 && NH % KV == 0 && cuda::flash_attention_takes(dtype, B, T, NH, hs);
}

std::size_t gqa_attention_saved_numel(Device device, DType dtype, int B, int T, int NH, int KV, int hs) {
  if (gqa_attention_takes_flash(device, dtype, B, T, NH, KV, hs))
    return cuda::elements_for_floats(cuda::flash_attention_stats_floats(B, NH, T), dtype);
  return sz(B * NH, T) * T;
}

std::size_t gqa_attention_scratch_numel(Device device, DType dtype, int B, int T, int NH, int KV, int hs) {
  if (device.is_cpu()) return sz(T, T);
  if (gqa_attention_takes_flash(device, dtype, B, T, NH, KV, hs))
    return cuda::elements_for_floats(cuda::flash_attention_scratch_floats(B, NH, T), dtype);
  // q, k, v (k and v repeated to NH heads) and dq, dk, dv (B, NH, T, hs) each, y/dy (B, NH, T, hs),
  // datt (B, NH, T, T)
  return 7 * sz(B * T, NH * hs) + sz(B * NH, T) * T;
}

namespace {
void check_gqa(const ComputeContext& ctx, BufferView att, BufferView qkv, BufferView scratch, int B, int T, int NH,
               int KV, int hs) {
  if (KV < 1 || NH % KV != 0)
    throw std::invalid_argument(fmt::format("gqa attention: {} key/value heads do not divide {} heads", KV, NH));
  check_act(ctx, att, gqa_attention_saved_numel(ctx.device(), ctx.dtype(), B, T, NH, KV, hs), "gqa attention att");
  check_act(ctx, qkv, sz(B * T, (NH + 2 * KV) * hs), "gqa attention qkv");
  check_act(ctx, scratch, gqa_attention_scratch_numel(ctx.device(), ctx.dtype(), B, T, NH, KV, hs),
            "gqa attention scratch");
}
}  // namespace

void gqa_attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch,
                           int B, int T, int NH, int KV, int hs) {
  check_gqa(ctx, att, qkv, scratch, B, T, NH, KV, hs);
  check_act(ctx, out, sz(B * T, NH * hs), "gqa attention out");
  if (ctx.device().is_cuda()) return on_cuda::gqa_attention_forward(ctx, out, att, qkv, scratch, B, T, NH, KV, hs);
  cpu::Fp32Views w;
  cpu::gqa_attention_forward(w.out(out), w.out(att), w.in(qkv), B, T, NH, KV, hs);
  w.store();
}

void gqa_attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView out,
                            BufferView att, BufferView scratch, int B, int T, int NH, int KV, int hs) {
  check_gqa(ctx, att, qkv, scratch, B, T, NH, KV, hs);
  check_act(ctx, dqkv, sz(B * T, (NH + 2 * KV) * hs), "gqa attention dqkv");
  check_act(ctx, dout, sz(B * T, NH * hs), "gqa attention dout");
  check_act(ctx, out, sz(B * T, NH * hs), "gqa attention out");
  if (ctx.device().is_cuda())
    return on_cuda::gqa_attention_backward(ctx, dqkv, dout, qkv, out, att, scratch, B, T, NH, KV, hs);
  cpu::Fp32Views w;
  cpu::gqa_attention_backward(w.out(dqkv), w.out(scratch), w.in(dout), w.in(qkv), w.in(att), B, T, NH, KV, hs);
  w.store();
}

}  // namespace zt::models::ops
