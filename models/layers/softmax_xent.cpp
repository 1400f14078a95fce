#include "models/layers/softmax_xent.h"

#include <cmath>
#include <cstddef>

#include "models/layers/fast_math.h"

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

ZT_CPU_KERNEL void backward_rows(float* dlogits, const float* logits, const std::int32_t* targets, float dloss,
                                 std::size_t n0, std::size_t n1, int V, int Vp) {
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
    const float scale = dloss / sum;
    const float target_logit = row[target];  // read before the row may be overwritten (aliasing)
#pragma omp simd
    for (int v = 0; v < V; ++v) drow[v] = fast::exp(row[v] - max) * scale;
    drow[target] = fast::exp(target_logit - max) * scale - dloss;
    for (int v = V; v < Vp; ++v) drow[v] = 0.0f;
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

}  // namespace zt::models::cpu
