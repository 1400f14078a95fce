// Parity with Hugging Face transformers (float64) on small Llama-family models: logits, loss and
// every parameter gradient, from fixtures written by tools/make_llama_fixtures.py with
// transformers' LlamaForCausalLM (grouped-query attention, untied head, Llama 3 RoPE scaling) and
// Qwen3ForCausalLM (QK-norm, multi-query attention, tied embeddings). The fixtures carry
// transformers' own randomly initialised weights, stored in zerotrain's flat order under the same
// tensor names, so this also proves that Hugging Face weights load without any permutation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "models/activations.h"
#include "models/llama.h"
#include "models/llama_hf_names.h"
#include "models/model_state.h"

namespace zt::models::test {
namespace {

struct Fixture {
  LlamaConfig config;
  int B = 0, T = 0;
  std::vector<std::int32_t> tokens, targets;
  std::vector<float> params, logits, grads;
  double loss = 0;
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path + " (regenerate with tools/make_llama_fixtures.py)");
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
    if (at_ + n > data_.size()) throw std::runtime_error(path_ + " is truncated");
    std::memcpy(dst, data_.data() + at_, n);
    at_ += n;
  }
  std::string path_;
  std::vector<char> data_;
  std::size_t at_ = 0;
};

Fixture load_fixture(const std::string& name) {
  Reader r(std::string(ZT_MODELS_FIXTURES_DIR) + "/" + name);
  Fixture f;
  auto magic = r.array<char>(4);
  if (std::string(magic.begin(), magic.end()) != "ZTL1" || r.get<std::int32_t>() != 1)
    throw std::runtime_error(name + " is not a version-1 Llama fixture");
  LlamaConfig& c = f.config;
  c.n_layer = r.get<std::int32_t>(), c.n_head = r.get<std::int32_t>(), c.n_kv_head = r.get<std::int32_t>();
  c.n_embd = r.get<std::int32_t>(), c.intermediate_size = r.get<std::int32_t>(), c.vocab_size = r.get<std::int32_t>();
  c.block_size = r.get<std::int32_t>(), c.tie_embeddings = r.get<std::int32_t>() != 0;
  c.qk_norm = r.get<std::int32_t>() != 0;
  c.rope_theta = r.get<double>();
  c.rope_scaling.factor = r.get<float>(), c.rope_scaling.low_freq_factor = r.get<float>();
  c.rope_scaling.high_freq_factor = r.get<float>(), c.rope_scaling.original_max_position = r.get<std::int32_t>();
  c.rms_norm_eps = r.get<float>();
  f.B = r.get<std::int32_t>(), f.T = r.get<std::int32_t>();
  auto n = static_cast<std::size_t>(r.get<std::int64_t>());
  std::size_t BT = static_cast<std::size_t>(f.B) * f.T;
  f.tokens = r.array<std::int32_t>(BT);
  f.targets = r.array<std::int32_t>(BT);
  f.params = r.array<float>(n);
  f.logits = r.array<float>(BT * c.vocab_size);
  f.loss = r.get<double>();
  f.grads = r.array<float>(n);
  if (!r.done()) throw std::runtime_error(name + " has trailing bytes");
  return f;
}

class LlamaParity : public ::testing::TestWithParam<std::string> {};

TEST_P(LlamaParity, LogitsLossAndEveryGradientMatchTransformers) {
  const Fixture fx = load_fixture(GetParam());
  Llama model(fx.config);
  ASSERT_EQ(fx.params.size(), model.param_count()) << "the fixture's layout differs from zerotrain's";
  auto ctx = ComputeContext::cpu();
  ModelState state(model, Device::cpu(), DType::f32);
  state.set_params_f32(fx.params);  // transformers' weights, as they are
  state.zero_grad(*ctx);
  Activations acts(model, fx.B, fx.T, Device::cpu(), DType::f32);
  acts.set_tokens(fx.tokens, fx.targets);
  const float loss = forward(*ctx, model, state, acts);
  // Logits (saved by the head block) before backward overwrites them with their gradient.
  const float* logits = acts.io(model.num_blocks() - 1).saved[2].as<float>();
  double logit_err = 0, logit_scale = 0;
  for (std::size_t i = 0; i < fx.logits.size(); ++i) {
    logit_err = std::max(logit_err, std::abs(double(logits[i]) - fx.logits[i]));
    logit_scale = std::max(logit_scale, std::abs(double(fx.logits[i])));
  }
  backward(*ctx, model, state, acts);
  const std::vector<float> grads = state.grads_f32();
  // Gradients: max |error| relative to the largest gradient of the same tensor (elementwise
  // relative error is meaningless for entries that are ~0), and the relative norm error.
  double worst_tensor = 0, diff2 = 0, norm2 = 0;
  std::size_t base = 0;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    for (const ParamTensor& t : model.block(b).layout().tensors()) {
      double err = 0, scale = 0;
      for (std::size_t k = 0; k < t.numel; ++k) {
        double g = grads[base + t.offset + k], ref = fx.grads[base + t.offset + k];
        err = std::max(err, std::abs(g - ref));
        scale = std::max(scale, std::abs(ref));
        diff2 += (g - ref) * (g - ref), norm2 += ref * ref;
      }
      ASSERT_GT(scale, 0.0) << model.block(b).name() << "." << t.name << " has no gradient in the fixture";
      worst_tensor = std::max(worst_tensor, err / scale);
      EXPECT_LE(err, 1e-4 * scale) << model.block(b).name() << "." << t.name;
    }
    base += model.block(b).param_count();
  }
  const double loss_rel = std::abs(loss - fx.loss) / fx.loss;
  std::printf("%s vs transformers fp64: loss %.6f (rel err %.2e), logits max abs err %.2e (scale %.2f), grads max "
              "err per tensor (rel. to its max) %.2e, grads rel norm err %.2e\n",
              GetParam().c_str(), loss, loss_rel, logit_err, logit_scale, worst_tensor, std::sqrt(diff2 / norm2));
  RecordProperty("loss_rel_err", std::to_string(loss_rel));
  RecordProperty("grads_max_rel_err", std::to_string(worst_tensor));
  EXPECT_LT(loss_rel, 1e-5);
  EXPECT_LT(logit_err, 1e-5 * logit_scale);
  EXPECT_LT(worst_tensor, 1e-4);
}

// The Hugging Face tensor table lists every parameter once, in zerotrain's flat order: the order
// tools/make_llama_fixtures.py concatenated transformers' tensors in, which the test above proves.
TEST_P(LlamaParity, HuggingFaceTensorTableCoversEveryParameterInOrder) {
  const Fixture fx = load_fixture(GetParam());
  Llama model(fx.config);
  const std::vector<HfTensorMapping> table = llama_hf_tensors(fx.config);
  std::size_t block = 0, index = 0, total = 0;
  for (const HfTensorMapping& m : table) {
    if (m.block != block) block = m.block, index = 0;
    const ParamTensor& t = model.block(m.block).layout().tensors().at(index++);
    EXPECT_EQ(m.tensor, t.name) << m.hf_name;
    EXPECT_FALSE(m.transpose) << m.hf_name;
    total += t.numel;
  }
  EXPECT_EQ(total, model.param_count());
  EXPECT_EQ(table.front().hf_name, "model.embed_tokens.weight");
  EXPECT_EQ(table.back().hf_name, fx.config.tie_embeddings ? "model.norm.weight" : "lm_head.weight");
  if (fx.config.qk_norm) {
    EXPECT_EQ(table[6].hf_name, "model.layers.0.self_attn.q_norm.weight");
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LlamaParity, ::testing::Values("llama_tiny.bin", "qwen3_tiny.bin"),
                         [](const auto& info) { return info.param.substr(0, info.param.find('.')); });

}  // namespace
}  // namespace zt::models::test
