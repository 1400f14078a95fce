// The three kinds of Llama block (see llama.h). Exposed for tests; models are built by Llama.
#pragma once

#include <vector>

#include "models/block.h"
#include "models/llama.h"

namespace zt::models {

// tokens (B, T) -> x (B, T, C).  Parameters: embed_tokens.weight (V, C).
class LlamaEmbeddingBlock final : public Block {
 public:
  explicit LlamaEmbeddingBlock(const LlamaConfig& c);
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
  LlamaConfig c_;
  ParamLayout layout_;
};

// x (B, T, C) -> x + o_proj(attn(rope(qkv(rmsnorm(x))))) -> x' + down(silu(gate(.)) * up(.)).
class LlamaDecoderBlock final : public Block {
 public:
  LlamaDecoderBlock(const LlamaConfig& c, int index);
  std::string name() const override { return "layers." + std::to_string(index_); }
  const ParamLayout& layout() const override { return layout_; }
  std::size_t output_numel(int B, int T) const override;
  std::vector<ActivationSlot> saved_slots(int B, int T, Device device, DType dtype) const override;
  std::vector<ActivationSlot> scratch_slots(int B, int T, Device device, DType dtype) const override;
  void forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) override;
  void backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) override;
  double flops(int B, int T) const override;

 private:
  LlamaConfig c_;
  int index_;
  ParamLayout layout_;
  std::vector<float> inv_freq_;  // RoPE frequencies (head_size / 2)
};

// x (B, T, C) -> rmsnorm -> logits (B, T, V) = norm(x) W^T -> per-position loss (B, T) f32, with W
// lm_head.weight, or embed_tokens.weight of block 0 when tied.
class LlamaHeadBlock final : public Block {
 public:
  LlamaHeadBlock(const LlamaConfig& c, const ParamLayout& embedding_layout);
  std::string name() const override { return "head"; }
  const ParamLayout& layout() const override { return layout_; }
  std::optional<std::size_t> tied_block() const override;
  // Tied: its backward's two products are equal in FLOPs, and the tied weight's gradient comes first.
  double tied_grads_done_share() const override { return c_.tie_embeddings ? 0.5 : 1.0; }
  bool is_loss_block() const override { return true; }
  std::size_t output_numel(int B, int T) const override;
  std::vector<ActivationSlot> saved_slots(int B, int T, Device device, DType dtype) const override;
  std::vector<ActivationSlot> scratch_slots(int B, int T, Device device, DType dtype) const override;
  void forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) override;
  void backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) override;
  double flops(int B, int T) const override;

 private:
  LlamaConfig c_;
  ParamLayout layout_;
  const ParamLayout* embedding_layout_;  // owned by block 0, which the model keeps alive
};

}  // namespace zt::models
