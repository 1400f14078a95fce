#include "models/ops/attention.h"

#include <cblas.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "models/cpu/fast_math.h"
#include "models/cuda/flash_attention_rules.h"
#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {
namespace reference {

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH) {
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const int ld = 3 * C;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      const float* q = qkv + static_cast<std::size_t>(b) * T * ld + h * hs;
      const float* k = q + C;
      const float* v = q + 2 * C;
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
        float inv = 1.0f / sum;
        for (int j = 0; j <= i; ++j) row[j] *= inv;
        for (int j = i + 1; j < T; ++j) row[j] = 0.0f;
      }
      // out_h (T, hs) = a (T, T) v (T, hs)
      float* o = out + static_cast<std::size_t>(b) * T * C + h * hs;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, v, ld, 0.0f, o, C);
    }
}

void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH) {
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const int ld = 3 * C;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      std::size_t base = static_cast<std::size_t>(b) * T * ld + h * hs;
      const float* q = qkv + base;
      const float* k = q + C;
      const float* v = q + 2 * C;
      float* dq = dqkv + base;
      float* dk = dq + C;
      float* dv = dq + 2 * C;
      const float* a = att + (static_cast<std::size_t>(b) * NH + h) * T * T;
      const float* d = dout + static_cast<std::size_t>(b) * T * C + h * hs;
      float* da = scratch;
      // da (T, T) = d (T, hs) v^T;  dv (T, hs) = a^T (T, T) d (T, hs)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, d, C, v, ld, 0.0f, da, T);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, d, C, 0.0f, dv, ld);
      // Softmax backward in place: dpre = a * (da - sum_j a da), zero above the diagonal.
      for (int i = 0; i < T; ++i) {
        const float* arow = a + static_cast<std::size_t>(i) * T;
        float* drow = da + static_cast<std::size_t>(i) * T;
        float dot = 0.0f;
        for (int j = 0; j <= i; ++j) dot += arow[j] * drow[j];
        for (int j = 0; j <= i; ++j) drow[j] = arow[j] * (drow[j] - dot);
        for (int j = i + 1; j < T; ++j) drow[j] = 0.0f;
      }
      // dq = scale * dpre k;  dk = scale * dpre^T q
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, scale, da, T, k, ld, 0.0f, dq, ld);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, scale, da, T, q, ld, 0.0f, dk, ld);
    }
}

}  // namespace reference

// The fast kernels work on tiles of kTile query rows. Row tile [r0, r1) only sees keys [0, r1)
// (causal), so its score and value products are (r1 - r0) x r1 instead of (r1 - r0) x T: the
// masked upper triangle is skipped except inside the diagonal tile, about half of the work for
// long sequences (T = 256: 44 % fewer FLOPs). Each tile's softmax runs while its scores are still
// in cache, between the two products that use them.
namespace {

constexpr int kTile = 32;

// Causal softmax of rows [r0, r1) of a (T, T) score matrix, in place over columns [0, r1); zero
// in (i, T) of row i, as the saved probabilities promise.
ZT_CPU_KERNEL void softmax_rows_causal(float* a, int r0, int r1, int T) {
  for (int i = r0; i < r1; ++i) {
    float* row = a + static_cast<std::size_t>(i) * T;
    float m = row[0];
#pragma omp simd reduction(max : m)
    for (int j = 0; j <= i; ++j) m = row[j] > m ? row[j] : m;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int j = 0; j <= i; ++j) {
      row[j] = fast::exp(row[j] - m);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int j = 0; j <= i; ++j) row[j] *= inv;
    for (int j = i + 1; j < T; ++j) row[j] = 0.0f;
  }
}

// Softmax backward of rows [r0, r1) in place: dpre = a * (da - sum_j a da) over [0, i], zero in
// (i, r1) (the products that follow read the whole tile width).
ZT_CPU_KERNEL void softmax_backward_rows_causal(float* da, const float* a, int r0, int r1, int T) {
  for (int i = r0; i < r1; ++i) {
    const float* arow = a + static_cast<std::size_t>(i) * T;
    float* drow = da + static_cast<std::size_t>(i) * T;
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (int j = 0; j <= i; ++j) dot += arow[j] * drow[j];
#pragma omp simd
    for (int j = 0; j <= i; ++j) drow[j] = arow[j] * (drow[j] - dot);
    for (int j = i + 1; j < r1; ++j) drow[j] = 0.0f;
  }
}

}  // namespace

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH) {
  if (zt::reference_cpu_kernels()) return reference::attention_forward(out, att, qkv, B, T, C, NH);
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const int ld = 3 * C;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      const float* q = qkv + static_cast<std::size_t>(b) * T * ld + h * hs;
      const float* k = q + C;
      const float* v = q + 2 * C;
      float* a = att + (static_cast<std::size_t>(b) * NH + h) * T * T;
      float* o = out + static_cast<std::size_t>(b) * T * C + h * hs;
      for (int r0 = 0; r0 < T; r0 += kTile) {
        const int r1 = r0 + kTile < T ? r0 + kTile : T, rows = r1 - r0;
        float* a_tile = a + static_cast<std::size_t>(r0) * T;
        // a[r0:r1, 0:r1] = scale * q[r0:r1] (rows, hs) k[0:r1]^T (hs, r1)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, r1, hs, scale, q + static_cast<std::size_t>(r0) * ld,
                    ld, k, ld, 0.0f, a_tile, T);
        softmax_rows_causal(a, r0, r1, T);
        // o[r0:r1] (rows, hs) = a[r0:r1, 0:r1] (rows, r1) v[0:r1] (r1, hs)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hs, r1, 1.0f, a_tile, T, v, ld, 0.0f,
                    o + static_cast<std::size_t>(r0) * C, C);
      }
    }
}

void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B,
                        int T, int C, int NH) {
  if (zt::reference_cpu_kernels()) return reference::attention_backward(dqkv, scratch, dout, qkv, att, B, T, C, NH);
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const int ld = 3 * C;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      std::size_t base = static_cast<std::size_t>(b) * T * ld + h * hs;
      const float* q = qkv + base;
      const float* k = q + C;
      const float* v = q + 2 * C;
      float* dq = dqkv + base;
      float* dk = dq + C;
      float* dv = dq + 2 * C;
      const float* a = att + (static_cast<std::size_t>(b) * NH + h) * T * T;
      const float* d = dout + static_cast<std::size_t>(b) * T * C + h * hs;
      float* da = scratch;
      // dk and dv collect one contribution per row tile (beta = 1 below).
      for (int t = 0; t < T; ++t)
        for (int c = 0; c < hs; ++c) {
          dk[static_cast<std::size_t>(t) * ld + c] = 0.0f;
          dv[static_cast<std::size_t>(t) * ld + c] = 0.0f;
        }
      for (int r0 = 0; r0 < T; r0 += kTile) {
        const int r1 = r0 + kTile < T ? r0 + kTile : T, rows = r1 - r0;
        const std::size_t row_off = static_cast<std::size_t>(r0) * T;
        const float* d_tile = d + static_cast<std::size_t>(r0) * C;
        // da[r0:r1, 0:r1] = d[r0:r1] (rows, hs) v[0:r1]^T;  dv[0:r1] += a[r0:r1, 0:r1]^T (r1, rows) d[r0:r1]
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, r1, hs, 1.0f, d_tile, C, v, ld, 0.0f, da + row_off,
                    T);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1, hs, rows, 1.0f, a + row_off, T, d_tile, C, 1.0f, dv,
                    ld);
        softmax_backward_rows_causal(da, a, r0, r1, T);
        // dq[r0:r1] = scale * dpre[r0:r1, 0:r1] k[0:r1];  dk[0:r1] += scale * dpre[r0:r1, 0:r1]^T q[r0:r1]
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hs, r1, scale, da + row_off, T, k, ld, 0.0f,
                    dq + static_cast<std::size_t>(r0) * ld, ld);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1, hs, rows, scale, da + row_off, T,
                    q + static_cast<std::size_t>(r0) * ld, ld, 1.0f, dk, ld);
      }
    }
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

bool attention_takes_flash(Device device, DType dtype, int B, int T, int C, int NH) {
  return device.is_cuda() && NH >= 1 && C % NH == 0 && cuda::flash_attention_takes(dtype, B, T, NH, C / NH);
}

std::size_t attention_saved_numel(Device device, DType dtype, int B, int T, int C, int NH) {
  if (attention_takes_flash(device, dtype, B, T, C, NH))
    return cuda::elements_for_floats(cuda::flash_attention_stats_floats(B, NH, T), dtype);
  return sz(B * NH, T) * T;
}

std::size_t attention_scratch_numel(Device device, DType dtype, int B, int T, int C, int NH) {
  if (device.is_cpu()) return sz(T, T);
  if (attention_takes_flash(device, dtype, B, T, C, NH))
    return cuda::elements_for_floats(cuda::flash_attention_scratch_floats(B, NH, T), dtype);
  // q, k, v and dq, dk, dv (B, NH, T, hs) each, y/dy (B, NH, T, hs), datt (B, NH, T, T)
  return 7 * sz(B * T, C) + sz(B * NH, T) * T;
}

void attention_forward(ComputeContext& ctx, BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B,
                       int T, int C, int NH) {
  check_act(ctx, out, sz(B * T, C), "attention out");
  check_act(ctx, att, attention_saved_numel(ctx.device(), ctx.dtype(), B, T, C, NH), "attention att");
  check_act(ctx, qkv, sz(B * T, 3 * C), "attention qkv");
  check_act(ctx, scratch, attention_scratch_numel(ctx.device(), ctx.dtype(), B, T, C, NH), "attention scratch");
  if (ctx.device().is_cuda()) return on_cuda::attention_forward(ctx, out, att, qkv, scratch, B, T, C, NH);
  cpu::Fp32Views w;
  cpu::attention_forward(w.out(out), w.out(att), w.in(qkv), B, T, C, NH);
  w.store();
}

void attention_backward(ComputeContext& ctx, BufferView dqkv, BufferView dout, BufferView qkv, BufferView out,
                        BufferView att, BufferView scratch, int B, int T, int C, int NH) {
  check_act(ctx, dqkv, sz(B * T, 3 * C), "attention dqkv");
  check_act(ctx, dout, sz(B * T, C), "attention dout");
  check_act(ctx, out, sz(B * T, C), "attention out");
  check_act(ctx, att, attention_saved_numel(ctx.device(), ctx.dtype(), B, T, C, NH), "attention att");
  check_act(ctx, qkv, sz(B * T, 3 * C), "attention qkv");
  check_act(ctx, scratch, attention_scratch_numel(ctx.device(), ctx.dtype(), B, T, C, NH), "attention scratch");
  if (ctx.device().is_cuda()) return on_cuda::attention_backward(ctx, dqkv, dout, qkv, out, att, scratch, B, T, C, NH);
  cpu::Fp32Views w;
  cpu::attention_backward(w.out(dqkv), w.out(scratch), w.in(dout), w.in(qkv), w.in(att), B, T, C, NH);
  w.store();
}

}  // namespace zt::models::ops
