#include "models/layers/softmax_xent.h"

#include <cmath>
#include <cstddef>

namespace zt::models::cpu {

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

}  // namespace zt::models::cpu
