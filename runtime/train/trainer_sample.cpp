// The Trainer's samples (train.sample_interval): every so many steps, rank 0 prints a short text
// generated from the current weights, so a user sees the model learn (as llm.c does).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "models/family.h"
#include "core/error.h"
#include "core/log.h"
#include "runtime/train/run_tokenizer.h"
#include "runtime/train/text_sampler.h"
#include "runtime/train/trainer.h"

namespace zt {
namespace {
constexpr int kSampleTokens = 32;
}  // namespace

void Trainer::prepare_sampling() {
  if (config_.train.sample_interval == 0 || comm_->rank() != 0) return;
  if (!models::model_family(config_.model.type).reads_tokens()) {
    log::warn("train.sample_interval: a {} model does not generate text; no samples", choice_name(config_.model.type));
    return;
  }
  try {
    sample_tokenizer_ = run_tokenizer(config_, "");
  } catch (const UserError& e) {
    log::warn("train.sample_interval: {}; samples are printed as token ids", e.what());
  }
}

void Trainer::print_sample(std::int64_t step) {
  if (!models::model_family(config_.model.type).reads_tokens()) return;
  const std::vector<float> params = engine_->gather_full_params_f32();  // collective
  if (comm_->rank() != 0) return;
  TextSampler sampler(*model_, params);
  const std::int32_t start = sample_tokenizer_ ? sample_tokenizer_->end_of_text() : 0;
  SampleOptions options{kSampleTokens, 1.0, 40, static_cast<std::uint64_t>(step)};
  const std::vector<std::int32_t> tokens = sampler.generate(std::vector<std::int32_t>{start}, options);
  std::string text;
  if (sample_tokenizer_) {
    text = decode_for_display(*sample_tokenizer_, tokens);
  } else {
    text = fmt::format("{}", fmt::join(tokens, " "));
  }
  log::progress("step {} | sample: {}", step, nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));  // quoted, one line
}

}  // namespace zt
