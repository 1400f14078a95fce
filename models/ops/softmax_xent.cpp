#include "models/ops/softmax_xent.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "models/cpu/fast_math.h"
#include "models/cpu/fp32_views.h"
#include "models/ops/checks.h"

namespace zt::models::cpu {
namespace reference {

namespace {
// max and sum(exp(x - max)) of one row. The exponentials are float (a double exp per vocabulary
// entry would dominate a CPU step of GPT-2 124M); the sum is double, so it loses nothing.
void row_stats(const float* row, int V, float& max, double& sum) {
  max = row[0];
  for (int v = 1; v < V; ++v) max = row[v] > max ? row[v] : max;
  sum = 0.0;
  for (int v = 0; v < V; ++v) sum += std::exp(row[v] - max);
}
}  // namespace

int softmax_xent_forward(float* losses, const float* logits, const std::int32_t* targets, int N, int V, int Vp) {
  int count = 0;
  for (int n = 0; n < N; ++n) {
    if (targets[n] == kIgnoreIndex) {
      losses[n] = 0.0f;
      continue;
    }
    const float* row = logits + static_cast<std::size_t>(n) * Vp;
    float max;
    double sum;
    row_stats(row, V, max, sum);
    losses[n] = static_cast<float>(std::log(sum) - (row[targets[n]] - max));
    ++count;
  }
  return count;
}

void softmax_xent_backward(float* dlogits, const float* logits, const std::int32_t* targets, float dloss, int N, int V,
                           int Vp) {
  for (int n = 0; n < N; ++n) {
    const float* row = logits + static_cast<std::size_t>(n) * Vp;
    float* drow = dlogits + static_cast<std::size_t>(n) * Vp;
    std::int32_t target = targets[n];
    if (target == kIgnoreIndex) {
      for (int v = 0; v < Vp; ++v) drow[v] = 0.0f;
      continue;
    }
    float max;
    double sum;
    row_stats(row, V, max, sum);
    float inv = static_cast<float>(1.0 / sum);
    for (int v = 0; v < V; ++v) {
      float p = std::exp(row[v] - max) * inv;
      drow[v] = dloss * (p - (v == target ? 1.0f : 0.0f));
    }
    for (int v = V; v < Vp; ++v) drow[v] = 0.0f;
  }
}

}  // namespace reference

namespace {

// max and sum(exp(x - max)) of one row on the SIMD lanes: two reads of a row that is in cache.
ZT_CPU_KERNEL void fast_row_stats(const float* row, int V, float& max, float& sum) {
  float m = row[0];
#pragma omp simd reduction(max : m)
  for (int v = 0; v < V; ++v) m = row[v] > m ? row[v] : m;
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int v = 0; v < V; ++v) s += fast::exp(row[v] - m);
  max = m;
  sum = s;
}

void forward_rows(float* losses, const float* logits, const std::int32_t* targets, std::size_t n0, std::size_t n1,
                  int V, int Vp) {
  for (std::size_t n = n0; n < n1; ++n) {
    if (targets[n] == kIgnoreIndex) {
      losses[n] = 0.0f;
      continue;
    }
    const float* row = logits + n * Vp;
    float max, sum;
    fast_row_stats(row, V, max, sum);
    losses[n] = std::log(sum) - (row[targets[n]] - max);
  }
}

// One row's gradient from its maximum and sum; drow may alias row.
ZT_CPU_KERNEL void row_gradient(float* drow, const float* row, std::int32_t target, float dloss, float max, float sum,
                                int V, int Vp) {
  const float scale = dloss / sum;
  const float target_logit = row[target];  // read before the row may be overwritten (aliasing)
#pragma omp simd
  for (int v = 0; v < V; ++v) drow[v] = fast::exp(row[v] - max) * scale;
  drow[target] = fast::exp(target_logit - max) * scale - dloss;
  for (int v = V; v < Vp; ++v) drow[v] = 0.0f;
}

void backward_rows(float* dlogits, const float* logits, const std::int32_t* targets, float dloss, std::size_t n0,
                   std::size_t n1, int V, int Vp) {
  for (std::size_t n = n0; n < n1; ++n) {
    const float* row = logits + n * Vp;
    float* drow = dlogits + n * Vp;
    const std::int32_t target = targets[n];
    if (target == kIgnoreIndex) {
      for (int v = 0; v < Vp; ++v) drow[v] = 0.0f;
      continue;
    }
    float max, sum;
    fast_row_stats(row, V, max, sum);
    row_gradient(drow, row, target, dloss, max, sum, V, Vp);
  }
}

}  // namespace

int softmax_xent_forward(float* losses, const float* logits, const std::int32_t* targets, int N, int V, int Vp) {
  if (zt::reference_cpu_kernels()) return reference::softmax_xent_forward(losses, logits, targets, N, V, Vp);
  forward_rows(losses, logits, targets, 0, N, V, Vp);
  int count = 0;
  for (int n = 0; n < N; ++n) count += targets[n] != kIgnoreIndex;
  return count;
}

void softmax_xent_backward(float* dlogits, const float* logits, const std::int32_t* targets, float dloss, int N, int V,
                           int Vp) {
  if (zt::reference_cpu_kernels()) return reference::softmax_xent_backward(dlogits, logits, targets, dloss, N, V, Vp);
  backward_rows(dlogits, logits, targets, dloss, 0, N, V, Vp);
}

int softmax_xent_forward_backward(float* losses, float* logits, const std::int32_t* targets, float dloss, int N, int V,
                                  int Vp) {
  if (zt::reference_cpu_kernels()) {
    const int count = reference::softmax_xent_forward(losses, logits, targets, N, V, Vp);
    reference::softmax_xent_backward(logits, logits, targets, dloss, N, V, Vp);
    return count;
  }
  int count = 0;
  for (int n = 0; n < N; ++n) {
    float* row = logits + static_cast<std::size_t>(n) * Vp;
    const std::int32_t target = targets[n];
    if (target == kIgnoreIndex) {
      losses[n] = 0.0f;
      for (int v = 0; v < Vp; ++v) row[v] = 0.0f;
      continue;
    }
    float max, sum;
    fast_row_stats(row, V, max, sum);
    losses[n] = std::log(sum) - (row[target] - max);
    row_gradient(row, row, target, dloss, max, sum, V, Vp);
    ++count;
  }
  return count;
}

}  // namespace zt::models::cpu

namespace zt::models::ops {

using detail::check;
using detail::check_act;
using detail::sz;

void softmax_xent_forward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets, int N, int V,
                          int Vp) {
  check(ctx, losses, DType::f32, N, "softmax_xent losses");
  check_act(ctx, logits, sz(N, Vp), "softmax_xent logits");
  check(ctx, targets, DType::i32, N, "softmax_xent targets");
  if (ctx.device().is_cuda()) return on_cuda::softmax_xent_forward(ctx, losses, logits, targets, N, V, Vp);
  cpu::Fp32Views w;
  cpu::softmax_xent_forward(w.out(losses), w.in(logits), int32_view(targets), N, V, Vp);
  w.store();
}

void softmax_xent_backward(ComputeContext& ctx, BufferView dlogits, BufferView logits, BufferView targets, float dloss,
                           int N, int V, int Vp) {
  check_act(ctx, dlogits, sz(N, Vp), "softmax_xent dlogits");
  check_act(ctx, logits, sz(N, Vp), "softmax_xent logits");
  check(ctx, targets, DType::i32, N, "softmax_xent targets");
  if (ctx.device().is_cuda())
    return on_cuda::softmax_xent_backward(ctx, dlogits, logits, targets, dloss, N, V, Vp);
  cpu::Fp32Views w;
  cpu::softmax_xent_backward(w.out(dlogits), w.in(logits), int32_view(targets), dloss, N, V, Vp);
  w.store();
}

void softmax_xent_forward_backward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets,
                                   float dloss, int N, int V, int Vp) {
  check(ctx, losses, DType::f32, N, "softmax_xent losses");
  check_act(ctx, logits, sz(N, Vp), "softmax_xent logits");
  check(ctx, targets, DType::i32, N, "softmax_xent targets");
  if (ctx.device().is_cuda())
    return on_cuda::softmax_xent_forward_backward(ctx, losses, logits, targets, dloss, N, V, Vp);
  cpu::Fp32Views w;
  cpu::softmax_xent_forward_backward(w.out(losses), w.out(logits), int32_view(targets), dloss, N, V, Vp);
  w.store();
}

void classifier_forward(ComputeContext& ctx, BufferView losses, BufferView logits, BufferView targets,
                        std::optional<float> dloss_in_forward, int N, int V, int Vp) {
  if (dloss_in_forward) return softmax_xent_forward_backward(ctx, losses, logits, targets, *dloss_in_forward, N, V, Vp);
  softmax_xent_forward(ctx, losses, logits, targets, N, V, Vp);
}

void classifier_backward(ComputeContext& ctx, BufferView logits, BufferView targets,
                         std::optional<float> dloss_in_forward, float dloss, int N, int V, int Vp) {
  if (!dloss_in_forward) return softmax_xent_backward(ctx, logits, logits, targets, dloss, N, V, Vp);
  if (*dloss_in_forward != dloss)
    throw std::logic_error("the classifier's backward has another loss gradient than its fused forward used");
}

void add_mean_loss(ComputeContext& ctx, BufferView acc, BufferView losses, int valid) {
  check(ctx, acc, DType::f32, 2, "mean loss accumulator");
  check(ctx, losses, DType::f32, losses.numel, "losses");
  if (ctx.device().is_cuda()) return on_cuda::add_mean_loss(ctx, acc, losses, valid);
  const float* loss = static_cast<const float*>(losses.data);
  double sum = 0.0;
  for (std::size_t i = 0; i < losses.numel; ++i) sum += loss[i];
  const float mean = valid > 0 ? static_cast<float>(sum / valid) : 0.0f;
  double total = 0.0;
  std::memcpy(&total, acc.data, sizeof total);
  total += mean;
  std::memcpy(acc.data, &total, sizeof total);
}

}  // namespace zt::models::ops
