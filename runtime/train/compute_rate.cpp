#include "runtime/train/compute_rate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "models/compute_context.h"
#include "models/model_state.h"
#include "models/family.h"

namespace zt {

MeasuredComputeRate measure_cpu_compute_rate(const ModelConfig& config, int micro_batch, int seq_len, int threads,
                                             double min_seconds) {
  const models::ModelFamily& family = models::model_family(config.type);
  const ModelConfig measured = family.measurement_copy(config);
  const auto model = family.build(measured);
  models::ModelState state(*model, Device::cpu(), DType::f32);
  state.init(1);
  models::Activations acts(*model, micro_batch, seq_len, Device::cpu(), DType::f32);
  const std::size_t positions = static_cast<std::size_t>(micro_batch) * seq_len;
  const std::vector<std::int32_t> tokens(positions, 1), targets(positions, 1);
  if (model->input_kind() == models::Model::InputKind::tokens) {
    acts.set_tokens(tokens, targets);
  } else {
    acts.set_features(std::vector<float>(positions * model->input_width(), 0.5f), targets);
  }
  auto ctx = models::ComputeContext::cpu(threads);

  std::vector<std::size_t> timed;
  double flops = 0.0;
  for (std::size_t i = 0; i < model->num_blocks(); ++i)
    if (!model->block(i).is_loss_block() && model->block(i).flops(micro_batch, seq_len) > 0.0) {
      timed.push_back(i);
      flops += model->block(i).flops(micro_batch, seq_len);
    }

  using Clock = std::chrono::steady_clock;
  std::vector<double> seconds;
  const auto start = Clock::now();
  for (int pass = 0; pass < 4 || std::chrono::duration<double>(Clock::now() - start).count() < min_seconds; ++pass) {
    double pass_seconds = 0.0;
    for (std::size_t i = 0; i < model->num_blocks(); ++i) {
      const auto begin = Clock::now();
      models::forward_block(*ctx, *model, i, state.block_params(i), acts);
      ctx->synchronize();
      if (std::ranges::find(timed, i) != timed.end())
        pass_seconds += std::chrono::duration<double>(Clock::now() - begin).count();
    }
    for (std::size_t i = model->num_blocks(); i-- > 0;) {
      BufferView tied_grads;
      if (auto tied = model->block(i).tied_block()) tied_grads = state.grads(*tied);
      const auto begin = Clock::now();
      models::backward_block(*ctx, *model, i, state.block_params(i), state.grads(i), tied_grads, acts, 1.0f);
      ctx->synchronize();
      if (std::ranges::find(timed, i) != timed.end())
        pass_seconds += std::chrono::duration<double>(Clock::now() - begin).count();
    }
    if (pass > 0) seconds.push_back(pass_seconds);  // the first pass warms caches and the BLAS
  }
  std::ranges::sort(seconds);
  const double median = seconds[seconds.size() / 2];
  std::vector<std::string> names;
  for (std::size_t i : timed) names.push_back(model->block(i).name());
  return {flops / median,
          fmt::format("measured: forward + backward of {} ({} x {} tokens, {}), {} CPU thread(s), median of {} runs",
                      fmt::join(names, ", "), micro_batch, seq_len,
                      measured == config ? "the model itself" : "one-layer copy of the model", threads,
                      seconds.size())};
}

}  // namespace zt
