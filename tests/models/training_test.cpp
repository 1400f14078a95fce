// End to end on the CPU: tiny GPT-2 (byte-level vocabulary) and the MLP learn, with the
// reference AdamW, single process.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string_view>

#include "adamw_reference.h"
#include "models/activations.h"
#include "models/gpt2.h"
#include "models/llama.h"
#include "models/mlp.h"
#include "models/model_state.h"

namespace zt::models::test {
namespace {

constexpr std::string_view kText =
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age "
    "of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season "
    "of Light, it was the season of Darkness, it was the spring of hope, it was the winter of "
    "despair, we had everything before us, we had nothing before us, we were all going direct to "
    "Heaven, we were all going direct the other way.";

// Mean loss of the first and the last `window` steps.
struct Curve {
  double initial = 0, first = 0, last = 0;
};

Curve train(const Model& model, Activations& acts, int steps, float lr, const std::function<void(int)>& load) {
  auto ctx = ComputeContext::cpu(1);
  ModelState state(model, Device::cpu(), DType::f32);
  state.init(42);
  AdamWReference adamw;
  adamw.lr = lr;
  std::vector<float> params = state.params_f32();
  const int window = 20;
  Curve c;
  for (int step = 0; step < steps; ++step) {
    load(step);
    state.zero_grad(*ctx);
    float loss = forward(*ctx, model, state, acts);
    EXPECT_TRUE(std::isfinite(loss)) << "step " << step;
    backward(*ctx, model, state, acts);
    adamw.update(model, params, state.grads_f32());
    state.set_params_f32(params);
    if (step == 0) c.initial = loss;
    if (step < window) c.first += loss / window;
    if (step >= steps - window) c.last += loss / window;
  }
  return c;
}

TEST(Training, TinyGPT2OnTextHasAClearlyFallingLoss) {
  GPT2Config c;
  c.n_layer = 2, c.n_head = 4, c.n_embd = 64, c.vocab_size = 256, c.padded_vocab_size = 256, c.block_size = 32;
  GPT2 model(c);
  const int B = 8, T = 32, steps = 300;
  Activations acts(model, B, T, Device::cpu(), DType::f32);
  std::vector<std::int32_t> tokens(B * T), targets(B * T);
  auto load = [&](int step) {
    // Windows at offsets that walk through the text, so every step sees different positions.
    for (int b = 0; b < B; ++b) {
      std::size_t start = (static_cast<std::size_t>(step) * 37 + b * 53) % (kText.size() - T - 1);
      for (int t = 0; t < T; ++t) {
        tokens[b * T + t] = static_cast<unsigned char>(kText[start + t]);
        targets[b * T + t] = static_cast<unsigned char>(kText[start + t + 1]);
      }
    }
    acts.set_tokens(tokens, targets);
  };
  Curve curve = train(model, acts, steps, 3e-3f, load);
  RecordProperty("first_20_mean_loss", std::to_string(curve.first));
  RecordProperty("last_20_mean_loss", std::to_string(curve.last));
  std::printf("tiny GPT-2: initial loss %.3f, mean of the first 20 steps %.3f, of the last 20 %.3f\n",
              curve.initial, curve.first, curve.last);
  EXPECT_NEAR(curve.initial, std::log(256.0), 0.2);  // uniform over bytes at init
  EXPECT_LT(curve.last, 0.5 * curve.first);  // generous: it reaches far lower on this text
}

TEST(Training, TinyLlamaOnTextHasAClearlyFallingLoss) {
  LlamaConfig c;
  c.n_layer = 2, c.n_head = 4, c.n_kv_head = 2, c.n_embd = 64, c.intermediate_size = 176, c.vocab_size = 256,
  c.block_size = 32;
  Llama model(c);
  const int B = 8, T = 32, steps = 300;
  Activations acts(model, B, T, Device::cpu(), DType::f32);
  std::vector<std::int32_t> tokens(B * T), targets(B * T);
  auto load = [&](int step) {
    for (int b = 0; b < B; ++b) {
      std::size_t start = (static_cast<std::size_t>(step) * 37 + b * 53) % (kText.size() - T - 1);
      for (int t = 0; t < T; ++t) {
        tokens[b * T + t] = static_cast<unsigned char>(kText[start + t]);
        targets[b * T + t] = static_cast<unsigned char>(kText[start + t + 1]);
      }
    }
    acts.set_tokens(tokens, targets);
  };
  Curve curve = train(model, acts, steps, 3e-3f, load);
  std::printf("tiny Llama: initial loss %.3f, mean of the first 20 steps %.3f, of the last 20 %.3f\n", curve.initial,
              curve.first, curve.last);
  EXPECT_NEAR(curve.initial, std::log(256.0), 0.2);
  EXPECT_LT(curve.last, 0.5 * curve.first);
}

TEST(Training, MLPLearnsTheSyntheticTask) {
  MLPConfig c;
  MLP model(c);
  const int rows = 64;
  Activations acts(model, rows, 1, Device::cpu(), DType::f32);
  std::vector<float> x;
  std::vector<std::int32_t> y;
  auto load = [&](int step) {
    mlp_synthetic_batch(c, static_cast<std::uint64_t>(step), rows, x, y);
    acts.set_features(x, y);
  };
  Curve curve = train(model, acts, 200, 3e-3f, load);
  std::printf("MLP: mean loss of the first 20 steps %.3f, of the last 20 %.3f\n", curve.first, curve.last);
  EXPECT_LT(curve.last, 0.6 * curve.first);
}

}  // namespace
}  // namespace zt::models::test
