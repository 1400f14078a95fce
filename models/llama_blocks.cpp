#include "models/llama_blocks.h"

#include "models/flops.h"
#include "models/ops/gqa_attention.h"
#include "models/ops/linear.h"
#include "models/ops/residual.h"
#include "models/ops/rmsnorm.h"
#include "models/ops/rope.h"
#include "models/ops/softmax_xent.h"
#include "models/ops/swiglu.h"
#include "models/ops/token_embedding.h"

namespace zt::models {

namespace {
std::size_t sz(std::size_t a, std::size_t b) { return a * b; }
// transformers' initializer_range: every matrix and the embedding N(0, 0.02), RMSNorm gains 1.
constexpr float kInitStd = 0.02f;
// Consecutive tensors first..last of a layout as one view (a fused weight of adjacent matrices).
BufferView span(const ParamLayout& layout, const BufferView& flat, std::size_t first, std::size_t last) {
  layout.view(flat, first);  // checks that flat is this layout's flat parameter
  const ParamTensor& a = layout.tensors().at(first);
  const ParamTensor& b = layout.tensors().at(last);
  return flat.slice(a.offset, b.offset + b.numel - a.offset);
}
}  // namespace

// ---- embedding ------------------------------------------------------------------------------

LlamaEmbeddingBlock::LlamaEmbeddingBlock(const LlamaConfig& c) : c_(c) {
  layout_.add("embed_tokens.weight", {static_cast<std::size_t>(c.vocab_size), static_cast<std::size_t>(c.n_embd)},
              InitRule::normal(kInitStd), true, /*embedding=*/true);
}

std::optional<LookupRows> LlamaEmbeddingBlock::lookup_rows() const {
  return LookupRows{static_cast<std::size_t>(c_.n_embd), layout_.tensors()[0].offset, std::nullopt};
}

std::size_t LlamaEmbeddingBlock::output_numel(int B, int T) const { return sz(B * T, c_.n_embd); }

void LlamaEmbeddingBlock::forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) {
  // tokens (B, T) -> (B, T, C)
  ops::token_embedding_forward(ctx, io.output, io.input, layout_.view(p.params, 0), io.B * io.T, c_.n_embd);
}

void LlamaEmbeddingBlock::backward(ComputeContext& ctx, const BlockParams&, const BlockGrads& g, const BlockIO& io) {
  // (B, T, C) -> dwte (V, C), accumulated
  ops::token_embedding_backward(ctx, layout_.view(g.grads, 0), g.d_output, io.input, *io.token_index, io.B * io.T,
                                c_.n_embd);
}

// ---- decoder --------------------------------------------------------------------------------

namespace {
// Parameter indices in layout order; q, k, v are adjacent (one fused (W, C) product) and so are
// gate and up (one (2I, C) product). q_norm / k_norm exist only with QK-norm (then the later
// indices shift by 2: see DecoderParams).
enum P { ln1_w, q_w, k_w, v_w, o_w };
struct DecoderParams {
  std::size_t qn_w, kn_w, ln2_w, gate_w, up_w, down_w;
  explicit DecoderParams(bool qk_norm) {
    std::size_t next = o_w + 1;
    qn_w = qk_norm ? next++ : 0;
    kn_w = qk_norm ? next++ : 0;
    ln2_w = next++, gate_w = next++, up_w = next++, down_w = next++;
  }
};
// Saved activation indices.
enum S { s_ln1, s_rstd1, s_qkv_raw, s_qk_rstd, s_qkv, s_att, s_atty, s_mid, s_ln2, s_rstd2, s_gu, s_h };
// Scratch indices.
enum X { x_dln, x_dqkv, x_datty, x_dgu, x_dh, x_attn };
}  // namespace

LlamaDecoderBlock::LlamaDecoderBlock(const LlamaConfig& c, int index)
    : c_(c), index_(index), inv_freq_(cpu::rope_inv_freq(c.head_size(), c.rope_theta, c.rope_scaling)) {
  const std::size_t C = c.n_embd, hs = c.head_size(), I = c.intermediate_size;
  const std::size_t q_rows = c.n_head * hs, kv_rows = c.n_kv_head * hs;
  layout_.add("input_layernorm.weight", {C}, InitRule::ones(), false);
  layout_.add("self_attn.q_proj.weight", {q_rows, C}, InitRule::normal(kInitStd), true);
  layout_.add("self_attn.k_proj.weight", {kv_rows, C}, InitRule::normal(kInitStd), true);
  layout_.add("self_attn.v_proj.weight", {kv_rows, C}, InitRule::normal(kInitStd), true);
  layout_.add("self_attn.o_proj.weight", {C, q_rows}, InitRule::normal(kInitStd), true);
  if (c.qk_norm) {
    layout_.add("self_attn.q_norm.weight", {hs}, InitRule::ones(), false);
    layout_.add("self_attn.k_norm.weight", {hs}, InitRule::ones(), false);
  }
  layout_.add("post_attention_layernorm.weight", {C}, InitRule::ones(), false);
  layout_.add("mlp.gate_proj.weight", {I, C}, InitRule::normal(kInitStd), true);
  layout_.add("mlp.up_proj.weight", {I, C}, InitRule::normal(kInitStd), true);
  layout_.add("mlp.down_proj.weight", {C, I}, InitRule::normal(kInitStd), true);
}

std::size_t LlamaDecoderBlock::output_numel(int B, int T) const { return sz(B * T, c_.n_embd); }

std::vector<ActivationSlot> LlamaDecoderBlock::saved_slots(int B, int T, Device device, DType dtype) const {
  const std::size_t N = sz(B, T), C = c_.n_embd, hs = c_.head_size(), I = c_.intermediate_size;
  const std::size_t W = (c_.n_head + 2 * c_.n_kv_head) * hs, A = c_.n_head * hs;
  const std::size_t qk = c_.qk_norm ? 1 : 0;  // the QK-norm slots are empty without it
  return {{"ln1", N * C, false},
          {"rstd1", N, true},
          {"qkv_raw", qk * N * W, false},
          {"qk_rstd", qk * N * (c_.n_head + c_.n_kv_head), true},
          {"qkv", N * W, false},
          {"att", ops::gqa_attention_saved_numel(device, dtype, B, T, c_.n_head, c_.n_kv_head, c_.head_size()), false},
          {"atty", N * A, false},
          {"mid", N * C, false},
          {"ln2", N * C, false},
          {"rstd2", N, true},
          {"gu", N * 2 * I, false},
          {"h", N * I, false}};
}

std::vector<ActivationSlot> LlamaDecoderBlock::scratch_slots(int B, int T, Device device, DType dtype) const {
  const std::size_t N = sz(B, T), C = c_.n_embd, hs = c_.head_size(), I = c_.intermediate_size;
  const std::size_t W = (c_.n_head + 2 * c_.n_kv_head) * hs, A = c_.n_head * hs;
  return {{"d_ln", N * C, false},
          {"d_qkv", N * W, false},
          {"d_atty", N * A, false},
          {"d_gu", N * 2 * I, false},
          {"d_h", N * I, false},
          {"attn", ops::gqa_attention_scratch_numel(device, dtype, B, T, c_.n_head, c_.n_kv_head, c_.head_size()),
           false}};
}

void LlamaDecoderBlock::forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) {
  const int N = io.B * io.T, C = c_.n_embd, NH = c_.n_head, KV = c_.n_kv_head, hs = c_.head_size();
  const int I = c_.intermediate_size, W = (NH + 2 * KV) * hs, A = NH * hs;
  const float eps = c_.rms_norm_eps;
  const DecoderParams ix(c_.qk_norm);
  auto w = [&](std::size_t i) { return layout_.view(p.params, i); };
  const auto& s = io.saved;
  ops::rmsnorm_forward(ctx, s[s_ln1], s[s_rstd1], io.input, w(ln1_w), N, C, eps);
  // (B,T,C) -> (B,T,W): [q | k | v] from the adjacent q_proj, k_proj, v_proj in one product.
  ops::linear_forward(ctx, c_.qk_norm ? s[s_qkv_raw] : s[s_qkv], s[s_ln1], span(layout_, p.params, q_w, v_w), {}, N,
                      C, W, W);
  if (c_.qk_norm) {
    ops::copy(ctx, s[s_qkv], s[s_qkv_raw]);  // v as it is; the q and k heads are overwritten next
    const BufferView k_out = s[s_qkv].slice(NH * hs, s[s_qkv].numel - NH * hs);
    const BufferView k_in = s[s_qkv_raw].slice(NH * hs, s[s_qkv_raw].numel - NH * hs);
    const BufferView q_rstd = s[s_qk_rstd].slice(0, sz(N, NH)), k_rstd = s[s_qk_rstd].slice(sz(N, NH), sz(N, KV));
    ops::rmsnorm_forward(ctx, s[s_qkv], q_rstd, s[s_qkv_raw], w(ix.qn_w), N * NH, hs, eps, {NH, std::size_t(W)});
    ops::rmsnorm_forward(ctx, k_out, k_rstd, k_in, w(ix.kn_w), N * KV, hs, eps, {KV, std::size_t(W)});
  }
  ops::rope(ctx, s[s_qkv], inv_freq_, io.B, io.T, NH + KV, hs, W, false);  // q and k heads, in place
  ops::gqa_attention_forward(ctx, s[s_atty], s[s_att], s[s_qkv], io.scratch[x_attn], io.B, io.T, NH, KV, hs);
  ops::linear_forward(ctx, io.output, s[s_atty], w(o_w), {}, N, A, C, C);  // (B,T,A) -> (B,T,C)
  ops::residual_forward(ctx, s[s_mid], io.input, io.output);              // mid = x + attn
  ops::rmsnorm_forward(ctx, s[s_ln2], s[s_rstd2], s[s_mid], w(ix.ln2_w), N, C, eps);
  // (B,T,C) -> (B,T,2I): [gate | up] from the adjacent gate_proj and up_proj in one product.
  ops::linear_forward(ctx, s[s_gu], s[s_ln2], span(layout_, p.params, ix.gate_w, ix.up_w), {}, N, C, 2 * I, 2 * I);
  ops::swiglu_forward(ctx, s[s_h], s[s_gu], N, I);                          // -> (B,T,I)
  ops::linear_forward(ctx, io.output, s[s_h], w(ix.down_w), {}, N, I, C, C);  // -> (B,T,C)
  ops::residual_forward(ctx, io.output, s[s_mid], io.output);               // out = mid + mlp
}

void LlamaDecoderBlock::backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) {
  const int N = io.B * io.T, C = c_.n_embd, NH = c_.n_head, KV = c_.n_kv_head, hs = c_.head_size();
  const int I = c_.intermediate_size, W = (NH + 2 * KV) * hs, A = NH * hs;
  const DecoderParams ix(c_.qk_norm);
  auto w = [&](std::size_t i) { return layout_.view(p.params, i); };
  auto dw = [&](std::size_t i) { return layout_.view(g.grads, i); };
  const auto& s = io.saved;
  const auto& x = io.scratch;
  BufferView dx = g.d_input;
  // The residual passes d_output straight to mid; the MLP branch then adds to it.
  ops::copy(ctx, dx, g.d_output);
  ops::linear_backward(ctx, x[x_dh], dw(ix.down_w), {}, g.d_output, s[s_h], w(ix.down_w), N, I, C, C);
  ops::swiglu_backward(ctx, x[x_dgu], x[x_dh], s[s_gu], N, I);
  ops::linear_backward(ctx, x[x_dln], span(layout_, g.grads, ix.gate_w, ix.up_w), {}, x[x_dgu], s[s_ln2],
                       span(layout_, p.params, ix.gate_w, ix.up_w), N, C, 2 * I, 2 * I);
  ops::rmsnorm_backward(ctx, dx, dw(ix.ln2_w), x[x_dln], s[s_mid], w(ix.ln2_w), s[s_rstd2], N, C, {}, true);
  // dx now holds d(mid); it flows to x unchanged, and through the attention branch.
  ops::linear_backward(ctx, x[x_datty], dw(o_w), {}, dx, s[s_atty], w(o_w), N, A, C, C);
  ops::gqa_attention_backward(ctx, x[x_dqkv], x[x_datty], s[s_qkv], s[s_atty], s[s_att], x[x_attn], io.B, io.T, NH, KV,
                              hs);
  ops::rope(ctx, x[x_dqkv], inv_freq_, io.B, io.T, NH + KV, hs, W, true);  // the rotation's transpose
  if (c_.qk_norm) {  // in place: the gradient of the raw q and k heads replaces that of the normalised ones
    const BufferView dk = x[x_dqkv].slice(NH * hs, x[x_dqkv].numel - NH * hs);
    const BufferView k_in = s[s_qkv_raw].slice(NH * hs, s[s_qkv_raw].numel - NH * hs);
    const BufferView q_rstd = s[s_qk_rstd].slice(0, sz(N, NH)), k_rstd = s[s_qk_rstd].slice(sz(N, NH), sz(N, KV));
    ops::rmsnorm_backward(ctx, x[x_dqkv], dw(ix.qn_w), x[x_dqkv], s[s_qkv_raw], w(ix.qn_w), q_rstd, N * NH, hs,
                          {NH, std::size_t(W)}, false);
    ops::rmsnorm_backward(ctx, dk, dw(ix.kn_w), dk, k_in, w(ix.kn_w), k_rstd, N * KV, hs, {KV, std::size_t(W)},
                          false);
  }
  ops::linear_backward(ctx, x[x_dln], span(layout_, g.grads, q_w, v_w), {}, x[x_dqkv], s[s_ln1],
                       span(layout_, p.params, q_w, v_w), N, C, W, W);
  ops::rmsnorm_backward(ctx, dx, dw(ln1_w), x[x_dln], io.input, w(ln1_w), s[s_rstd1], N, C, {}, true);
}

double LlamaDecoderBlock::flops(int B, int T) const {
  const double tokens = static_cast<double>(B) * T, C = c_.n_embd, hs = c_.head_size();
  const double W = (c_.n_head + 2 * c_.n_kv_head) * hs, A = c_.n_head * hs, I = c_.intermediate_size;
  return flops::linear(tokens, C, W) + flops::linear(tokens, A, C) + flops::linear(tokens, C, 2 * I) +
         flops::linear(tokens, I, C) + flops::attention(B, T, A);
}

// ---- head -----------------------------------------------------------------------------------

namespace {
enum H { h_ln, h_rstd, h_logits };
}  // namespace

LlamaHeadBlock::LlamaHeadBlock(const LlamaConfig& c, const ParamLayout& embedding_layout)
    : c_(c), embedding_layout_(&embedding_layout) {
  const std::size_t C = c.n_embd;
  layout_.add("norm.weight", {C}, InitRule::ones(), false);
  if (!c.tie_embeddings)
    layout_.add("lm_head.weight", {static_cast<std::size_t>(c.vocab_size), C}, InitRule::normal(kInitStd), true);
}

std::optional<std::size_t> LlamaHeadBlock::tied_block() const {
  return c_.tie_embeddings ? std::optional<std::size_t>(0) : std::nullopt;
}

std::size_t LlamaHeadBlock::output_numel(int B, int T) const { return sz(B, T); }

std::vector<ActivationSlot> LlamaHeadBlock::saved_slots(int B, int T, Device, DType) const {
  const std::size_t N = sz(B, T);
  return {{"norm", N * c_.n_embd, false}, {"norm_rstd", N, true}, {"logits", N * c_.vocab_size, false}};
}

std::vector<ActivationSlot> LlamaHeadBlock::scratch_slots(int B, int T, Device, DType) const {
  return {{"d_norm", sz(B * T, c_.n_embd), false}};
}

void LlamaHeadBlock::forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) {
  const int N = io.B * io.T, C = c_.n_embd, V = c_.vocab_size;
  const auto& s = io.saved;
  const BufferView head = c_.tie_embeddings ? embedding_layout_->view(p.tied_params, 0) : layout_.view(p.params, 1);
  ops::rmsnorm_forward(ctx, s[h_ln], s[h_rstd], io.input, layout_.view(p.params, 0), N, C, c_.rms_norm_eps);
  ops::linear_forward(ctx, s[h_logits], s[h_ln], head, {}, N, C, V, V);  // (B,T,C) -> (B,T,V)
  ops::classifier_forward(ctx, io.output, s[h_logits], io.targets, io.dloss_in_forward, N, V, V);  // -> (B,T) f32
}

void LlamaHeadBlock::backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) {
  const int N = io.B * io.T, C = c_.n_embd, V = c_.vocab_size;
  const auto& s = io.saved;
  const BufferView head = c_.tie_embeddings ? embedding_layout_->view(p.tied_params, 0) : layout_.view(p.params, 1);
  const BufferView dhead = c_.tie_embeddings ? embedding_layout_->view(g.tied_grads, 0) : layout_.view(g.grads, 1);
  // The logits' gradient overwrites them in place (saves (B,T,V)), here or in a fused forward.
  ops::classifier_backward(ctx, s[h_logits], io.targets, io.dloss_in_forward, g.dloss, N, V, V);
  // The head's weight gradient first: tied, its reduction then runs while the input's gradient is
  // computed.
  ops::linear_backward(ctx, {}, dhead, {}, s[h_logits], s[h_ln], head, N, C, V, V);
  g.tied_grads_complete();
  ops::linear_backward(ctx, io.scratch[0], {}, {}, s[h_logits], s[h_ln], head, N, C, V, V);
  ops::rmsnorm_backward(ctx, g.d_input, layout_.view(g.grads, 0), io.scratch[0], io.input, layout_.view(p.params, 0),
                        s[h_rstd], N, C, {}, false);
}

double LlamaHeadBlock::flops(int B, int T) const {
  return flops::linear(static_cast<double>(B) * T, c_.n_embd, c_.vocab_size);
}

}  // namespace zt::models
