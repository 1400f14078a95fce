// Text generation from a token model's weights (GPT-2, Llama): a single-process copy of the model on the CPU (fp32),
// one forward pass per new token over the context so far, and temperature / top-k sampling from
// the last position's logits with a seeded generator (the same seed gives the same text).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "models/activations.h"
#include "models/compute_context.h"
#include "models/model.h"
#include "models/model_state.h"

namespace zt {

struct SampleOptions {
  int max_new_tokens = 64;
  double temperature = 1.0;  // 0 = always the most likely token
  int top_k = 0;             // 0 = the whole vocabulary
  std::uint64_t seed = 0;
};

class TextSampler {
 public:
  // params_f32: every block's flat parameter, block after block (ModelState::set_params_f32).
  // model: a token model (Model::vocab_size() > 0), which outlives the sampler.
  TextSampler(const models::Model& model, const std::vector<float>& params_f32);
  ~TextSampler();

  // Continues `prompt` (at least one token) by options.max_new_tokens tokens; the context is the
  // last max_seq_len() tokens. on_token, when given, sees each new token as it is chosen.
  std::vector<std::int32_t> generate(std::span<const std::int32_t> prompt, const SampleOptions& options,
                                     const std::function<void(std::int32_t)>& on_token = {});

 private:
  const models::Model& model_;
  std::unique_ptr<models::ComputeContext> ctx_;
  std::unique_ptr<models::ModelState> state_;
};

// The token chosen from one row of logits (only the first `vocab` entries count): argmax for
// temperature 0, else a draw from softmax(logits / temperature) over the top_k largest.
// `uniform` is a draw from [0, 1).
std::int32_t choose_token(std::span<const float> logits, double temperature, int top_k, double uniform);

}  // namespace zt
