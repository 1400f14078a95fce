// Whole-model finite-difference check on every parameter of a model (CPU, fp32), and a small
// fp32 training setup, shared by the GPT-2, MLP and Llama model tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "models/activations.h"
#include "models/model_state.h"

namespace zt::models::test {

// A model on the CPU in fp32 with its seed-3 parameters, and a 2 x 8 batch of deterministic tokens
// below `vocab` (every target valid).
struct TinyTraining {
  TinyTraining(const Model& model, int vocab)
      : state(model, Device::cpu(), DType::f32), acts(model, 2, 8, Device::cpu(), DType::f32) {
    state.init(3);
    std::vector<std::int32_t> tokens(16), targets(16);
    for (int i = 0; i < 16; ++i) tokens[i] = (i * 7) % vocab, targets[i] = (i * 5 + 1) % vocab;
    acts.set_tokens(tokens, targets);
  }
  std::unique_ptr<ComputeContext> ctx = ComputeContext::cpu();
  ModelState state;
  Activations acts;
};

// Whole-model check on every parameter. The objective is the mean loss (O(1), summed in double
// from the per-position fp32 losses); gradients are O(1e-3..1e-1). With step h = 2e-3, fp32
// rounding inside the network (~1e-7 relative per value, amplified by a few layers) gives
// numeric-gradient noise of ~1e-7..1e-6 / 4e-3 ~ 1e-4, and truncation is ~h^2 ~ 4e-6; hence
// 3e-4 absolute + 2e-2 relative per element, and the whole block's gradient vector within 1 %
// in norm, which no wrong term (a missing or doubled path) can pass.
inline double mean_loss_f64(const Activations& acts, const Model& model) {
  BufferView losses = acts.output(model.num_blocks() - 1);
  const float* l = losses.as<float>();
  double s = 0.0;
  for (std::size_t i = 0; i < losses.numel; ++i) s += l[i];
  return s / acts.valid_targets();
}
// Twice the initial parameters, so every path carries a visible gradient.
inline void double_params(std::vector<float>& flat) {
  for (float& x : flat) x *= 2.0f;
}

// prepare() turns the initial parameters (all blocks, flat) into the point where gradients are checked.
inline void check_model_gradients(const Model& model, Activations& acts, std::uint64_t seed,
                                  const std::function<void(std::vector<float>&)>& prepare = double_params,
                                  float step = 2e-3f) {
  auto ctx = ComputeContext::cpu();
  ModelState state(model, Device::cpu(), DType::f32);
  state.init(seed);
  std::vector<float> p = state.params_f32();
  prepare(p);
  state.set_params_f32(p);
  state.zero_grad(*ctx);
  forward(*ctx, model, state, acts);
  backward(*ctx, model, state, acts);
  std::vector<float> analytic = state.grads_f32();
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    float* data = state.params(b).as<float>();
    std::vector<float> x(data, data + state.params(b).numel);
    std::vector<float> g(analytic.begin(), analytic.begin() + x.size());
    analytic.erase(analytic.begin(), analytic.begin() + x.size());
    std::vector<float> numeric;
    auto objective = [&] {
      std::copy(x.begin(), x.end(), data);
      forward(*ctx, model, state, acts);
      return mean_loss_f64(acts, model);
    };
    expect_gradient(model.block(b).name(), x, g, objective, step, 2e-2, 3e-4, &numeric);
    std::copy(x.begin(), x.end(), data);
    double diff = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < g.size(); ++i) diff += (g[i] - numeric[i]) * (g[i] - numeric[i]), norm += numeric[i] * numeric[i];
    EXPECT_LT(std::sqrt(diff / norm), 1e-2) << model.block(b).name();
    ::testing::Test::RecordProperty(model.block(b).name() + "_rel_norm_err", std::to_string(std::sqrt(diff / norm)));
  }
}

}  // namespace zt::models::test
