// zt_bench_cpu_fusion: the fused CPU kernels against the two passes each replaced, on one thread,
// at the shapes of a GPT-2 block: N = B*T rows of width C (LayerNorm) and 4C (GELU).
//
//   zt_bench_cpu_fusion N C [repeats] [V]
//
// Unfused, as the block ran them before the fusion:
//   bias + GELU forward   the bias written into the pre-activation in a pass of its own, then GELU
//   GELU + bias backward  GELU' over the rows, then the bias gradient's column sums in a second pass
//   residual + LayerNorm  residual_forward, then layernorm_forward reading mid back
//   classifier            softmax_xent_forward, then softmax_xent_backward over the logits (N rows
//                         of a vocabulary of V, default 50257, padded to a multiple of 64)
// (the GELU passes are the fused kernels with a zero bias / a discarded bias gradient, which cost
// what the old element-wise GELU cost). Fused and unfused alternate, repeats times each; prints
// one markdown row per pair with the medians in ms.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "models/ops/gelu.h"
#include "models/ops/layernorm.h"
#include "models/ops/residual.h"
#include "models/ops/softmax_xent.h"

namespace {

using namespace zt::models::cpu;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void compare(const char* what, int repeats, const std::function<void()>& fused, const std::function<void()>& unfused) {
  std::vector<double> a, b;
  auto ms = [](const std::function<void()>& f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  fused(), unfused();  // first touch of the pages
  for (int r = 0; r < repeats; ++r) a.push_back(ms(fused)), b.push_back(ms(unfused));
  std::printf("| %s | %.3f | %.3f | %.2f |\n", what, median(b), median(a), median(b) / median(a));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: zt_bench_cpu_fusion N C [repeats] [V]\n");
    return 2;
  }
  const int N = std::atoi(argv[1]), C = std::atoi(argv[2]), repeats = argc > 3 ? std::atoi(argv[3]) : 21;
  const int V = argc > 4 ? std::atoi(argv[4]) : 50257, Vp = (V + 63) / 64 * 64;
  if (N < 1 || C < 1 || repeats < 1 || V < 1) {
    std::fprintf(stderr, "zt_bench_cpu_fusion: N, C and repeats must be positive (got %s %s)\n", argv[1], argv[2]);
    return 2;
  }
  const int H = 4 * C;
  const std::size_t nh = static_cast<std::size_t>(N) * H, nc = static_cast<std::size_t>(N) * C;
  std::vector<float> pre(nh), out(nh), dpre(nh), dout(nh), bias(H), zero(H, 0.0f), dbias(H), discard(H);
  std::vector<float> a(nc), b(nc), mid(nc), ln(nc), mean(N), rstd(N), w(C, 1.0f), lb(C, 0.0f);
  for (std::size_t i = 0; i < nh; ++i) pre[i] = 0.001f * static_cast<float>(i % 4001) - 2.0f, dout[i] = 0.5f;
  for (std::size_t i = 0; i < nc; ++i) a[i] = 0.01f * static_cast<float>(i % 301), b[i] = 1.0f;
  for (int i = 0; i < H; ++i) bias[i] = 0.001f * i;
  // Each forward adds the bias into pre once more: values drift by at most 4C * 1e-3 per call, and
  // the kernels' cost does not depend on them (no branches).
  const std::vector<float> pre0 = pre;  // what the backward reads

  std::printf("| op (N = %d, C = %d) | unfused ms | fused ms | unfused / fused |\n| --- | --- | --- | --- |\n", N, C);
  compare("bias + GELU forward", repeats,
          [&] { bias_gelu_forward(out.data(), pre.data(), bias.data(), N, H); },
          [&] {
            for (int n = 0; n < N; ++n)
              for (int c = 0; c < H; ++c) pre[static_cast<std::size_t>(n) * H + c] += bias[c];
            bias_gelu_forward(out.data(), pre.data(), zero.data(), N, H);
          });
  compare("GELU + bias backward", repeats, [&] { gelu_bias_backward(dpre.data(), dbias.data(), pre0.data(), dout.data(), N, H); },
          [&] {
            gelu_bias_backward(dpre.data(), discard.data(), pre0.data(), dout.data(), N, H);
            for (int n = 0; n < N; ++n)
              for (int c = 0; c < H; ++c) dbias[c] += dpre[static_cast<std::size_t>(n) * H + c];
          });
  compare("residual + LayerNorm forward", repeats,
          [&] {
            residual_layernorm_forward(mid.data(), ln.data(), mean.data(), rstd.data(), a.data(), b.data(), w.data(),
                                       lb.data(), N, C);
          },
          [&] {
            residual_forward(mid.data(), a.data(), b.data(), nc);
            layernorm_forward(ln.data(), mean.data(), rstd.data(), mid.data(), w.data(), lb.data(), N, C);
          });
  // The logits become their gradient in both versions; the cost does not depend on the values.
  std::vector<float> logits(static_cast<std::size_t>(N) * Vp), losses(N);
  for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = 0.01f * static_cast<float>(i % 997) - 5.0f;
  std::vector<std::int32_t> targets(N);
  for (int n = 0; n < N; ++n) targets[n] = (n * 7919) % V;
  compare("classifier forward + backward", repeats,
          [&] { softmax_xent_forward_backward(losses.data(), logits.data(), targets.data(), 1.0f / N, N, V, Vp); },
          [&] {
            softmax_xent_forward(losses.data(), logits.data(), targets.data(), N, V, Vp);
            softmax_xent_backward(logits.data(), logits.data(), targets.data(), 1.0f / N, N, V, Vp);
          });
  return 0;
}
