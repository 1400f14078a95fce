#include "runtime/train/text_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "core/error.h"

namespace zt {

TextSampler::TextSampler(const models::Model& model, const std::vector<float>& params_f32)
    : model_(model), ctx_(models::ComputeContext::cpu(1)),
      state_(std::make_unique<models::ModelState>(model, Device::cpu(), DType::f32)) {
  if (model.vocab_size() == 0) throw UserError(fmt::format("a {} model does not generate text", model.name()));
  state_->set_params_f32(params_f32);
}

TextSampler::~TextSampler() = default;

std::int32_t choose_token(std::span<const float> logits, double temperature, int top_k, double uniform) {
  const std::size_t V = logits.size();
  std::vector<std::int32_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  // Highest logit first; ties by the lower id, so the choice never depends on the sort.
  auto higher = [&](std::int32_t a, std::int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  if (temperature <= 0.0) return *std::min_element(order.begin(), order.end(), higher);
  const std::size_t k = top_k > 0 ? std::min<std::size_t>(static_cast<std::size_t>(top_k), V) : V;
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), higher);
  std::vector<double> weights(k);
  const double top = logits[order[0]];
  for (std::size_t i = 0; i < k; ++i) weights[i] = std::exp((logits[order[i]] - top) / temperature);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  double target = uniform * total;
  for (std::size_t i = 0; i < k; ++i) {
    if (target < weights[i]) return order[i];
    target -= weights[i];
  }
  return order[k - 1];  // rounding left a sliver past the last weight
}

std::vector<std::int32_t> TextSampler::generate(std::span<const std::int32_t> prompt, const SampleOptions& options,
                                                const std::function<void(std::int32_t)>& on_token) {
  if (prompt.empty()) throw UserError("the prompt has no tokens (give some text)");
  const int vocab = model_.vocab_size();
  std::vector<std::int32_t> tokens(prompt.begin(), prompt.end());
  for (std::int32_t t : tokens)
    if (t < 0 || t >= vocab)
      throw UserError(fmt::format("prompt token {} is outside the model's vocabulary of {}", t, vocab));
  // One window long enough for the whole generation (capped at max_seq_len): positions after the
  // context hold filler that causal attention keeps from affecting the positions before.
  const int T = static_cast<int>(
      std::min<std::size_t>(tokens.size() + options.max_new_tokens, static_cast<std::size_t>(model_.max_seq_len())));
  models::Activations acts(model_, 1, T, Device::cpu(), DType::f32);
  // The loss block's "logits" slot (model.h): T rows of row_length >= vocab logits.
  const std::size_t head = model_.num_blocks() - 1;
  const std::vector<models::ActivationSlot> slots = model_.block(head).saved_slots(1, T, Device::cpu(), DType::f32);
  const auto logits_slot = std::ranges::find(slots, std::string("logits"), &models::ActivationSlot::name);
  if (logits_slot == slots.end()) throw std::logic_error(model_.name() + "'s loss block keeps no logits");
  const auto slot_index = static_cast<std::size_t>(logits_slot - slots.begin());
  const std::size_t row_length = logits_slot->numel / static_cast<std::size_t>(T);
  std::vector<std::int32_t> window(T, 0), targets(T, 0);
  std::mt19937_64 rng(options.seed);
  std::vector<std::int32_t> generated;
  for (int n = 0; n < options.max_new_tokens; ++n) {
    const std::size_t context = std::min<std::size_t>(tokens.size(), T);
    std::fill(window.begin(), window.end(), 0);
    std::copy(tokens.end() - static_cast<std::ptrdiff_t>(context), tokens.end(), window.begin());
    acts.set_tokens(window, targets);
    models::forward(*ctx_, model_, *state_, acts);
    // The row of the last context position.
    const float* logits = acts.io(head).saved[slot_index].as<float>() + (context - 1) * row_length;
    const double uniform = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1), the same on every platform
    const std::int32_t next = choose_token(std::span(logits, static_cast<std::size_t>(vocab)), options.temperature, options.top_k, uniform);
    tokens.push_back(next);
    generated.push_back(next);
    if (on_token) on_token(next);
  }
  return generated;
}

}  // namespace zt
