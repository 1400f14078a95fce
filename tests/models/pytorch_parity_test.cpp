// Parity with PyTorch (float64) on tiny GPT-2: logits, loss, every parameter gradient and the
// losses of 10 AdamW steps, from tests/models/fixtures/gpt2_tiny.bin written by
// tools/make_gpt2_fixtures.py from zerotrain's own initial weights (same seed, same batch).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "adamw_reference.h"
#include "models/activations.h"
#include "models/gpt2.h"
#include "models/model_state.h"

namespace zt::models::test {
namespace {

struct Fixture {
  int B = 0, T = 0, V = 0;
  std::uint64_t seed = 0;
  std::vector<std::int32_t> tokens, targets;
  std::vector<float> logits, grads;
  double loss = 0;
  float lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  std::vector<double> losses;
};

class Reader {
 public:
  explicit Reader(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path + " (regenerate with tools/make_gpt2_fixtures.py)");
    data_.assign(std::istreambuf_iterator<char>(in), {});
  }
  template <typename T> T get() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  template <typename T> std::vector<T> array(std::size_t n) {
    std::vector<T> v(n);
    take(v.data(), n * sizeof(T));
    return v;
  }
  bool done() const { return at_ == data_.size(); }

 private:
  void take(void* dst, std::size_t n) {
    if (at_ + n > data_.size()) throw std::runtime_error("fixture file is truncated");
    std::memcpy(dst, data_.data() + at_, n);
    at_ += n;
  }
  std::vector<char> data_;
  std::size_t at_ = 0;
};

Fixture load_fixture() {
  Reader r(std::string(ZT_MODELS_FIXTURES_DIR) + "/gpt2_tiny.bin");
  Fixture f;
  auto magic = r.array<char>(4);
  if (std::string(magic.begin(), magic.end()) != "ZTF1" || r.get<std::int32_t>() != 1)
    throw std::runtime_error("not a version-1 gpt2 fixture");
  f.B = r.get<std::int32_t>(), f.T = r.get<std::int32_t>(), f.V = r.get<std::int32_t>();
  f.seed = r.get<std::uint64_t>();
  auto n = static_cast<std::size_t>(r.get<std::int64_t>());
  std::size_t BT = static_cast<std::size_t>(f.B) * f.T;
  f.tokens = r.array<std::int32_t>(BT);
  f.targets = r.array<std::int32_t>(BT);
  f.logits = r.array<float>(BT * f.V);
  f.loss = r.get<double>();
  f.grads = r.array<float>(n);
  int steps = r.get<std::int32_t>();
  f.lr = r.get<float>(), f.beta1 = r.get<float>(), f.beta2 = r.get<float>(), f.eps = r.get<float>(),
  f.weight_decay = r.get<float>();
  f.losses = r.array<double>(steps);
  if (!r.done()) throw std::runtime_error("fixture file has trailing bytes");
  return f;
}

double rel(double a, double ref) { return std::abs(a - ref) / std::abs(ref); }

class PyTorchParity : public ::testing::Test {
 protected:
  void SetUp() override {
    fx_ = load_fixture();
    ASSERT_EQ(fx_.V, model_.config().padded_vocab_size);
    state_.init(fx_.seed);
    acts_.set_tokens(fx_.tokens, fx_.targets);
  }
  Fixture fx_;
  GPT2 model_{GPT2Config::preset("tiny")};
  std::unique_ptr<ComputeContext> ctx_ = ComputeContext::cpu();
  ModelState state_{model_, Device::cpu(), DType::f32};
  Activations acts_{model_, 2, 16, Device::cpu(), DType::f32};
};

TEST_F(PyTorchParity, LogitsLossAndEveryGradient) {
  ASSERT_EQ(fx_.grads.size(), model_.param_count());
  state_.zero_grad(*ctx_);
  float loss = forward(*ctx_, model_, state_, acts_);
  // Logits (saved by the head block) before backward overwrites them with their gradient.
  const float* logits = acts_.io(model_.num_blocks() - 1).saved[3].as<float>();
  double logit_err = 0, logit_scale = 0;
  for (std::size_t i = 0; i < fx_.logits.size(); ++i) {
    logit_err = std::max(logit_err, std::abs(double(logits[i]) - fx_.logits[i]));
    logit_scale = std::max(logit_scale, std::abs(double(fx_.logits[i])));
  }
  backward(*ctx_, model_, state_, acts_);
  std::vector<float> grads = state_.grads_f32();
  // Gradients: max |error| relative to the largest gradient of the same tensor (elementwise
  // relative error is meaningless for entries that are ~0), and the relative norm error.
  double worst_tensor = 0, diff2 = 0, norm2 = 0;
  std::size_t base = 0;
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    for (const ParamTensor& t : model_.block(b).layout().tensors()) {
      double err = 0, scale = 0;
      for (std::size_t k = 0; k < t.numel; ++k) {
        double g = grads[base + t.offset + k], ref = fx_.grads[base + t.offset + k];
        err = std::max(err, std::abs(g - ref));
        scale = std::max(scale, std::abs(ref));
        diff2 += (g - ref) * (g - ref), norm2 += ref * ref;
      }
      if (scale > 0) worst_tensor = std::max(worst_tensor, err / scale);
      EXPECT_LE(err, 1e-4 * scale) << model_.block(b).name() << "." << t.name;
    }
    base += model_.block(b).param_count();
  }
  double loss_rel = rel(loss, fx_.loss);
  std::printf("parity vs PyTorch fp64: loss rel err %.2e, logits max abs err %.2e (scale %.2f), grads max err "
              "per tensor (rel. to its max) %.2e, grads rel norm err %.2e\n",
              loss_rel, logit_err, logit_scale, worst_tensor, std::sqrt(diff2 / norm2));
  RecordProperty("loss_rel_err", std::to_string(loss_rel));
  RecordProperty("grads_max_rel_err", std::to_string(worst_tensor));
  EXPECT_LT(loss_rel, 1e-5);
  EXPECT_LT(logit_err, 1e-5 * logit_scale);
  EXPECT_LT(worst_tensor, 1e-4);
}

TEST_F(PyTorchParity, TenAdamWSteps) {
  AdamWReference adamw;
  adamw.lr = fx_.lr, adamw.beta1 = fx_.beta1, adamw.beta2 = fx_.beta2, adamw.eps = fx_.eps,
  adamw.weight_decay = fx_.weight_decay;
  std::vector<float> params = state_.params_f32();
  double worst = 0;
  for (std::size_t step = 0; step < fx_.losses.size(); ++step) {
    state_.zero_grad(*ctx_);
    float loss = forward(*ctx_, model_, state_, acts_);
    backward(*ctx_, model_, state_, acts_);
    adamw.update(model_, params, state_.grads_f32());
    state_.set_params_f32(params);
    worst = std::max(worst, rel(loss, fx_.losses[step]));
    EXPECT_LT(rel(loss, fx_.losses[step]), 1e-5) << "step " << step << ": " << loss << " vs " << fx_.losses[step];
  }
  std::printf("parity vs PyTorch fp64: 10 AdamW steps, losses %.4f -> %.4f, max rel err %.2e\n", fx_.losses.front(),
              fx_.losses.back(), worst);
  RecordProperty("adamw_losses_max_rel_err", std::to_string(worst));
}

}  // namespace
}  // namespace zt::models::test
