#include "models/mlp.h"

#include <fmt/format.h>

#include <stdexcept>

#include "models/flops.h"
#include "models/init.h"
#include "models/ops/gelu.h"
#include "models/ops/linear.h"
#include "models/ops/softmax_xent.h"

namespace zt::models {

namespace {
std::size_t sz(std::size_t a, std::size_t b) { return a * b; }

// (N, in) -> gelu(x W^T + b) (N, out)
class MLPHiddenBlock final : public Block {
 public:
  MLPHiddenBlock(int index, int in, int out) : index_(index), in_(in), out_(out) {
    layout_.add("fc.weight", {sz(out, 1), sz(in, 1)}, InitRule::normal(0.02f * 5), true);
    layout_.add("fc.bias", {sz(out, 1)}, InitRule::zeros(), false);
  }
  std::string name() const override { return "fc" + std::to_string(index_); }
  const ParamLayout& layout() const override { return layout_; }
  std::size_t output_numel(int B, int T) const override { return sz(B * T, out_); }
  std::vector<ActivationSlot> saved_slots(int B, int T, Device, DType) const override {
    return {{"pre", sz(B * T, out_), false}};
  }
  std::vector<ActivationSlot> scratch_slots(int B, int T, Device, DType) const override {
    return {{"d_pre", sz(B * T, out_), false}};
  }
  void forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) override {
    int N = io.B * io.T;
    ops::linear_forward(ctx, io.saved[0], io.input, layout_.view(p.params, 0), {}, N, in_, out_, out_);
    ops::bias_gelu_forward(ctx, io.output, io.saved[0], layout_.view(p.params, 1), N, out_);
  }
  void backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) override {
    int N = io.B * io.T;
    ops::gelu_bias_backward(ctx, io.scratch[0], layout_.view(g.grads, 1), io.saved[0], g.d_output, N, out_);
    ops::linear_backward(ctx, g.d_input, layout_.view(g.grads, 0), {}, io.scratch[0], io.input,
                         layout_.view(p.params, 0), N, in_, out_, out_);
  }
  double flops(int B, int T) const override { return flops::linear(static_cast<double>(B) * T, in_, out_); }

 private:
  int index_, in_, out_;
  ParamLayout layout_;
};

// (N, in) -> logits (N, classes) -> per-row loss (N) f32
class MLPOutputBlock final : public Block {
 public:
  MLPOutputBlock(int in, int classes) : in_(in), classes_(classes) {
    layout_.add("out.weight", {sz(classes, 1), sz(in, 1)}, InitRule::normal(0.02f), true);
    layout_.add("out.bias", {sz(classes, 1)}, InitRule::zeros(), false);
  }
  std::string name() const override { return "out"; }
  const ParamLayout& layout() const override { return layout_; }
  bool is_loss_block() const override { return true; }
  std::size_t output_numel(int B, int T) const override { return sz(B, T); }
  std::vector<ActivationSlot> saved_slots(int B, int T, Device, DType) const override {
    return {{"logits", sz(B * T, classes_), false}};
  }
  std::vector<ActivationSlot> scratch_slots(int, int, Device, DType) const override { return {}; }
  void forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) override {
    int N = io.B * io.T;
    ops::linear_forward(ctx, io.saved[0], io.input, layout_.view(p.params, 0), layout_.view(p.params, 1), N, in_,
                        classes_, classes_);
    ops::classifier_forward(ctx, io.output, io.saved[0], io.targets, io.dloss_in_forward, N, classes_, classes_);
  }
  void backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) override {
    int N = io.B * io.T;
    ops::classifier_backward(ctx, io.saved[0], io.targets, io.dloss_in_forward, g.dloss, N, classes_, classes_);
    ops::linear_backward(ctx, g.d_input, layout_.view(g.grads, 0), layout_.view(g.grads, 1), io.saved[0], io.input,
                         layout_.view(p.params, 0), N, in_, classes_, classes_);
  }
  double flops(int B, int T) const override { return flops::linear(static_cast<double>(B) * T, in_, classes_); }

 private:
  int in_, classes_;
  ParamLayout layout_;
};
}  // namespace

void MLPConfig::validate() const {
  if (input_width < 1 || hidden_width < 1 || n_hidden < 1 || n_classes < 2)
    throw std::invalid_argument(fmt::format("MLP sizes must be positive with at least 2 classes (got {}/{}/{}/{})",
                                            input_width, hidden_width, n_hidden, n_classes));
}

MLP::MLP(const MLPConfig& config) : config_(config) {
  config_.validate();
  for (int i = 0; i < config_.n_hidden; ++i)
    blocks_.push_back(
        std::make_unique<MLPHiddenBlock>(i, i == 0 ? config_.input_width : config_.hidden_width, config_.hidden_width));
  blocks_.push_back(std::make_unique<MLPOutputBlock>(config_.hidden_width, config_.n_classes));
}

void mlp_synthetic_batch(const MLPConfig& config, std::uint64_t seed, int rows, std::vector<float>& features,
                         std::vector<std::int32_t>& labels) {
  const int D = config.input_width, K = config.n_classes;
  std::vector<double> teacher(sz(K, D));
  NormalGenerator t(0x7EAC4E5ull);
  for (double& v : teacher) v = t.next();
  NormalGenerator gen(block_seed(seed, 0xDA7A));
  features.resize(sz(rows, D));
  labels.resize(rows);
  for (int r = 0; r < rows; ++r) {
    float* x = features.data() + sz(r, D);
    for (int d = 0; d < D; ++d) x[d] = static_cast<float>(gen.next());
    int best = 0;
    double best_score = 0.0;
    for (int k = 0; k < K; ++k) {
      double score = 0.0;
      for (int d = 0; d < D; ++d) score += teacher[sz(k, D) + d] * x[d];
      if (k == 0 || score > best_score) best = k, best_score = score;
    }
    labels[r] = best;
  }
}

void MLP::synthetic_batch(std::uint64_t seed, int rows, std::vector<float>& features,
                          std::vector<std::int32_t>& labels) const {
  mlp_synthetic_batch(config_, seed, rows, features, labels);
}

}  // namespace zt::models
