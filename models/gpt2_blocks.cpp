#include "models/gpt2_blocks.h"

#include <cmath>

#include "models/flops.h"
#include "models/ops/attention.h"
#include "models/ops/embedding.h"
#include "models/ops/gelu.h"
#include "models/ops/layernorm.h"
#include "models/ops/linear.h"
#include "models/ops/residual.h"
#include "models/ops/softmax_xent.h"

namespace zt::models {

namespace {
std::size_t sz(std::size_t a, std::size_t b) { return a * b; }
constexpr float kInitStd = 0.02f;
}  // namespace

// ---- embedding ------------------------------------------------------------------------------

GPT2EmbeddingBlock::GPT2EmbeddingBlock(const GPT2Config& c) : c_(c) {
  std::size_t C = c.n_embd;
  layout_.add("wte", {static_cast<std::size_t>(c.padded_vocab_size), C}, InitRule::normal(kInitStd), true,
              /*embedding=*/true);
  layout_.add("wpe", {static_cast<std::size_t>(c.block_size), C}, InitRule::normal(kInitStd), true, /*embedding=*/true);
}

std::optional<LookupRows> GPT2EmbeddingBlock::lookup_rows() const {
  const std::size_t C = c_.n_embd;
  return LookupRows{C, layout_.tensors()[0].offset, layout_.tensors()[1].offset};  // wte by token, wpe by place
}

std::size_t GPT2EmbeddingBlock::output_numel(int B, int T) const { return sz(B * T, c_.n_embd); }

void GPT2EmbeddingBlock::forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) {
  // tokens (B, T) -> (B, T, C)
  ops::embedding_forward(ctx, io.output, io.input, layout_.view(p.params, 0), layout_.view(p.params, 1), io.B, io.T,
                         c_.n_embd);
}

void GPT2EmbeddingBlock::backward(ComputeContext& ctx, const BlockParams&, const BlockGrads& g, const BlockIO& io) {
  // (B, T, C) -> dwte (Vp, C), dwpe (block_size, C), accumulated
  ops::embedding_backward(ctx, layout_.view(g.grads, 0), layout_.view(g.grads, 1), g.d_output, io.input,
                          *io.token_index, io.B, io.T, c_.n_embd);
}

// ---- transformer ----------------------------------------------------------------------------

namespace {
// Parameter indices, in GPT-2's order.
enum P { ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b };
// Saved activation indices.
enum S { s_ln1, s_ln1_mean, s_ln1_rstd, s_qkv, s_att, s_atty, s_mid, s_ln2, s_ln2_mean, s_ln2_rstd, s_fc, s_gelu };
// Scratch indices.
enum X { x_dln, x_dqkv, x_datty, x_dfc, x_attn };
}  // namespace

GPT2TransformerBlock::GPT2TransformerBlock(const GPT2Config& c, int index) : c_(c), index_(index) {
  std::size_t C = c.n_embd;
  // Residual projections are scaled by 1/sqrt(2 n_layer): each block adds two of them to the
  // residual stream, and this keeps its variance independent of depth (GPT-2 paper, §2.3).
  float proj_std = kInitStd / std::sqrt(2.0f * c.n_layer);
  layout_.add("ln_1.weight", {C}, InitRule::ones(), false);
  layout_.add("ln_1.bias", {C}, InitRule::zeros(), false);
  layout_.add("attn.c_attn.weight", {3 * C, C}, InitRule::normal(kInitStd), true);
  layout_.add("attn.c_attn.bias", {3 * C}, InitRule::zeros(), false);
  layout_.add("attn.c_proj.weight", {C, C}, InitRule::normal(proj_std), true);
  layout_.add("attn.c_proj.bias", {C}, InitRule::zeros(), false);
  layout_.add("ln_2.weight", {C}, InitRule::ones(), false);
  layout_.add("ln_2.bias", {C}, InitRule::zeros(), false);
  layout_.add("mlp.c_fc.weight", {4 * C, C}, InitRule::normal(kInitStd), true);
  layout_.add("mlp.c_fc.bias", {4 * C}, InitRule::zeros(), false);
  layout_.add("mlp.c_proj.weight", {C, 4 * C}, InitRule::normal(proj_std), true);
  layout_.add("mlp.c_proj.bias", {C}, InitRule::zeros(), false);
}

std::size_t GPT2TransformerBlock::output_numel(int B, int T) const { return sz(B * T, c_.n_embd); }

std::vector<ActivationSlot> GPT2TransformerBlock::saved_slots(int B, int T, Device device, DType dtype) const {
  std::size_t BT = sz(B, T), C = c_.n_embd;
  const std::size_t att = ops::attention_saved_numel(device, dtype, B, T, c_.n_embd, c_.n_head);
  return {{"ln1", BT * C, false},  {"ln1_mean", BT, true},       {"ln1_rstd", BT, true},
          {"qkv", BT * 3 * C, false}, {"att", att, false}, {"atty", BT * C, false},
          {"mid", BT * C, false},  {"ln2", BT * C, false},       {"ln2_mean", BT, true},
          {"ln2_rstd", BT, true},  {"fc", BT * 4 * C, false},    {"gelu", BT * 4 * C, false}};
}

std::vector<ActivationSlot> GPT2TransformerBlock::scratch_slots(int B, int T, Device device, DType dtype) const {
  std::size_t BT = sz(B, T), C = c_.n_embd;
  return {{"d_ln", BT * C, false},
          {"d_qkv", BT * 3 * C, false},
          {"d_atty", BT * C, false},
          {"d_fc", BT * 4 * C, false},
          {"attn", ops::attention_scratch_numel(device, dtype, B, T, c_.n_embd, c_.n_head), false}};
}

void GPT2TransformerBlock::forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) {
  const int N = io.B * io.T, C = c_.n_embd, NH = c_.n_head;
  auto w = [&](int i) { return layout_.view(p.params, i); };
  const auto& s = io.saved;
  ops::layernorm_forward(ctx, s[s_ln1], s[s_ln1_mean], s[s_ln1_rstd], io.input, w(ln1_w), w(ln1_b), N, C);
  ops::linear_forward(ctx, s[s_qkv], s[s_ln1], w(qkv_w), w(qkv_b), N, C, 3 * C, 3 * C);  // (B,T,C) -> (B,T,3C)
  ops::attention_forward(ctx, s[s_atty], s[s_att], s[s_qkv], io.scratch[x_attn], io.B, io.T, C, NH);  // -> (B,T,C)
  ops::linear_forward(ctx, io.output, s[s_atty], w(proj_w), w(proj_b), N, C, C, C);
  // mid = x + attn, ln2 = layernorm(mid)
  ops::residual_layernorm_forward(ctx, s[s_mid], s[s_ln2], s[s_ln2_mean], s[s_ln2_rstd], io.input, io.output,
                                  w(ln2_w), w(ln2_b), N, C);
  // (B,T,C) -> (B,T,4C): on the GPU the bias and GELU are the product's epilogue; on the CPU one
  // sweep after it.
  ops::linear_gelu_forward(ctx, s[s_gelu], s[s_fc], s[s_ln2], w(fc_w), w(fc_b), N, C, 4 * C);
  ops::linear_forward(ctx, io.output, s[s_gelu], w(fcproj_w), w(fcproj_b), N, 4 * C, C, C);  // -> (B,T,C)
  ops::residual_forward(ctx, io.output, s[s_mid], io.output);  // out = mid + mlp
}

void GPT2TransformerBlock::backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) {
  const int N = io.B * io.T, C = c_.n_embd, NH = c_.n_head;
  auto w = [&](int i) { return layout_.view(p.params, i); };
  auto dw = [&](int i) { return layout_.view(g.grads, i); };
  const auto& s = io.saved;
  const auto& x = io.scratch;
  BufferView dx = g.d_input;
  // The residual passes d_output straight to mid; ln2's branch then adds to it.
  ops::copy(ctx, dx, g.d_output);
  ops::linear_backward_into_gelu(ctx, x[x_dfc], dw(fc_b), dw(fcproj_w), dw(fcproj_b), g.d_output, s[s_gelu],
                                 w(fcproj_w), s[s_fc], N, 4 * C, C);
  ops::linear_backward(ctx, x[x_dln], dw(fc_w), {}, x[x_dfc], s[s_ln2], w(fc_w), N, C, 4 * C, 4 * C);
  ops::layernorm_backward(ctx, dx, dw(ln2_w), dw(ln2_b), x[x_dln], s[s_mid], w(ln2_w), s[s_ln2_mean], s[s_ln2_rstd],
                          N, C);
  // dx now holds d(mid); it flows to x unchanged, and through the attention branch.
  ops::linear_backward(ctx, x[x_datty], dw(proj_w), dw(proj_b), dx, s[s_atty], w(proj_w), N, C, C, C);
  ops::attention_backward(ctx, x[x_dqkv], x[x_datty], s[s_qkv], s[s_atty], s[s_att], x[x_attn], io.B, io.T, C,
                          NH);
  ops::linear_backward(ctx, x[x_dln], dw(qkv_w), dw(qkv_b), x[x_dqkv], s[s_ln1], w(qkv_w), N, C, 3 * C, 3 * C);
  ops::layernorm_backward(ctx, dx, dw(ln1_w), dw(ln1_b), x[x_dln], io.input, w(ln1_w), s[s_ln1_mean], s[s_ln1_rstd],
                          N, C);
}

double GPT2TransformerBlock::flops(int B, int T) const {
  double tokens = static_cast<double>(B) * T, C = c_.n_embd;
  return flops::linear(tokens, C, 3 * C) + flops::linear(tokens, C, C) + flops::linear(tokens, C, 4 * C) +
         flops::linear(tokens, 4 * C, C) + flops::attention(B, T, C);
}

// ---- head -----------------------------------------------------------------------------------

namespace {
enum H { h_ln, h_mean, h_rstd, h_logits };
}  // namespace

GPT2HeadBlock::GPT2HeadBlock(const GPT2Config& c, const ParamLayout& embedding_layout)
    : c_(c), embedding_layout_(&embedding_layout) {
  std::size_t C = c.n_embd;
  layout_.add("ln_f.weight", {C}, InitRule::ones(), false);
  layout_.add("ln_f.bias", {C}, InitRule::zeros(), false);
}

std::size_t GPT2HeadBlock::output_numel(int B, int T) const { return sz(B, T); }

std::vector<ActivationSlot> GPT2HeadBlock::saved_slots(int B, int T, Device, DType) const {
  std::size_t BT = sz(B, T);
  return {{"ln_f", BT * c_.n_embd, false},
          {"ln_f_mean", BT, true},
          {"ln_f_rstd", BT, true},
          {"logits", BT * c_.padded_vocab_size, false}};
}

std::vector<ActivationSlot> GPT2HeadBlock::scratch_slots(int B, int T, Device, DType) const {
  return {{"d_ln_f", sz(B * T, c_.n_embd), false}};
}

void GPT2HeadBlock::forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) {
  const int N = io.B * io.T, C = c_.n_embd, V = c_.vocab_size, Vp = c_.padded_vocab_size;
  const auto& s = io.saved;
  BufferView wte = embedding_layout_->view(p.tied_params, 0);
  ops::layernorm_forward(ctx, s[h_ln], s[h_mean], s[h_rstd], io.input, layout_.view(p.params, 0),
                         layout_.view(p.params, 1), N, C);
  ops::linear_forward(ctx, s[h_logits], s[h_ln], wte, {}, N, C, Vp, Vp);  // (B,T,C) -> (B,T,Vp)
  ops::classifier_forward(ctx, io.output, s[h_logits], io.targets, io.dloss_in_forward, N, V, Vp);  // -> (B,T) f32
}

void GPT2HeadBlock::backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) {
  const int N = io.B * io.T, C = c_.n_embd, V = c_.vocab_size, Vp = c_.padded_vocab_size;
  const auto& s = io.saved;
  BufferView wte = embedding_layout_->view(p.tied_params, 0);
  BufferView dwte = embedding_layout_->view(g.tied_grads, 0);
  // The logits' gradient overwrites them in place (saves (B,T,Vp)), here or in a fused forward.
  ops::classifier_backward(ctx, s[h_logits], io.targets, io.dloss_in_forward, g.dloss, N, V, Vp);
  // The tied table's gradient first: its reduction then runs while the input's gradient is computed.
  ops::linear_backward(ctx, {}, dwte, {}, s[h_logits], s[h_ln], wte, N, C, Vp, Vp);
  g.tied_grads_complete();
  ops::linear_backward(ctx, io.scratch[0], {}, {}, s[h_logits], s[h_ln], wte, N, C, Vp, Vp);
  ops::fill_zero(ctx, g.d_input);
  ops::layernorm_backward(ctx, g.d_input, layout_.view(g.grads, 0), layout_.view(g.grads, 1), io.scratch[0], io.input,
                          layout_.view(p.params, 0), s[h_mean], s[h_rstd], N, C);
}

double GPT2HeadBlock::flops(int B, int T) const {
  // The product the head computes is Vp wide: the padding's logits are computed, then ignored.
  return flops::linear(static_cast<double>(B) * T, c_.n_embd, c_.padded_vocab_size);
}

}  // namespace zt::models
