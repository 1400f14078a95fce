// The three kinds of GPT-2 block (see gpt2.h). Exposed for tests; models are built by GPT2.
#pragma once

#include "models/block.h"
#include "models/gpt2.h"

namespace zt::models {

// tokens (B, T) -> x (B, T, C).  Parameters: wte (Vp, C), wpe (block_size, C).
class GPT2EmbeddingBlock final : public Block {
 public:
  explicit GPT2EmbeddingBlock(const GPT2Config& c);
  std::string name() const override { return "embedding"; }
  const ParamLayout& layout() const override { return layout_; }
  bool backward_reads_params() const override { return false; }
  std::optional<LookupRows> lookup_rows() const override;
  std::size_t output_numel(int B, int T) const override;
  std::vector<ActivationSlot> saved_slots(int, int, Device, DType) const override { return {}; }
  std::vector<ActivationSlot> scratch_slots(int, int, Device, DType) const override { return {}; }
  void forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) override;
  void backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) override;
  double flops(int, int) const override { return 0.0; }  // a lookup, no products

 private:
  GPT2Config c_;
  ParamLayout layout_;
};

// x (B, T, C) -> x + attn(ln1(x)) -> x' + mlp(ln2(x')).
class GPT2TransformerBlock final : public Block {
 public:
  GPT2TransformerBlock(const GPT2Config& c, int index);
  std::string name() const override { return "h" + std::to_string(index_); }
  const ParamLayout& layout() const override { return layout_; }
  std::size_t output_numel(int B, int T) const override;
  std::vector<ActivationSlot> saved_slots(int B, int T, Device device, DType dtype) const override;
  std::vector<ActivationSlot> scratch_slots(int B, int T, Device device, DType dtype) const override;
  void forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) override;
  void backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) override;
  double flops(int B, int T) const override;

 private:
  GPT2Config c_;
  int index_;
  ParamLayout layout_;
};

// x (B, T, C) -> ln_f -> logits (B, T, Vp) = ln_f(x) wte^T -> per-position loss (B, T) f32.
// Tied to block 0: reads wte from its parameter and accumulates into its gradient.
class GPT2HeadBlock final : public Block {
 public:
  GPT2HeadBlock(const GPT2Config& c, const ParamLayout& embedding_layout);
  std::string name() const override { return "head"; }
  const ParamLayout& layout() const override { return layout_; }
  std::optional<std::size_t> tied_block() const override { return 0; }
  // Its backward's two products are equal in FLOPs, and the tied weight's gradient comes first.
  double tied_grads_done_share() const override { return 0.5; }
  bool is_loss_block() const override { return true; }
  std::size_t output_numel(int B, int T) const override;
  std::vector<ActivationSlot> saved_slots(int B, int T, Device device, DType dtype) const override;
  std::vector<ActivationSlot> scratch_slots(int B, int T, Device device, DType dtype) const override;
  void forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) override;
  void backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) override;
  double flops(int B, int T) const override;

 private:
  GPT2Config c_;
  ParamLayout layout_;
  const ParamLayout* embedding_layout_;  // owned by block 0, which the model keeps alive
};

}  // namespace zt::models
