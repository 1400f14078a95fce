#include "optim/optimizer_ops.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/cpu_stream.h"
#include "optim/grad_stats.h"
#include "optim/step_stats.h"

namespace zt {
namespace {

CpuStream& cpu_stream(Stream& stream) { return as_cpu_stream(stream, "host optimizer work"); }

class CpuOptimizerOps final : public OptimizerOps {
 public:
  void adamw(const AdamWStep& step, Stream& stream) override {
    cpu_stream(stream).enqueue([step] { adamw_step_host(step); });
  }

  void sum_of_squares(BufferView grad, BufferView partial, BufferView, Stream& stream) override {
    check_partials(partial, 1);
    cpu_stream(stream).enqueue([=] {
      const double sum = grad_stats_host(grad.as<float>(), grad.numel).sum_of_squares;
      std::memcpy(partial.data, &sum, sizeof sum);
    });
  }

  void finish_step_stats(BufferView partials, BufferView stats, int micro_batches, Stream& stream) override {
    check_partials(partials, partials.numel / 2);
    cpu_stream(stream).enqueue([=] {
      DeviceStepStats record;
      std::memcpy(&record, stats.data, sizeof record);
      double total = 0.0;
      for (std::size_t i = 0; i < partials.numel / 2; ++i) {
        double partial;
        std::memcpy(&partial, static_cast<const char*>(partials.data) + i * sizeof partial, sizeof partial);
        total += partial;
      }
      record.sum_of_squares = static_cast<float>(total);
      // inf or NaN anywhere makes its partial, and so the total, inf or NaN (squares never cancel).
      record.non_finite = std::isfinite(total) ? 0.0f : 1.0f;
      record.exact_sum_of_squares = total;
      record.loss = static_cast<float>(record.loss_accumulator / micro_batches);
      std::memcpy(stats.data, &record, sizeof record);
    });
  }
};

}  // namespace

std::size_t step_stats_scratch_numel() { return 2 * kStepStatsBlocks; }

void check_partials(BufferView partials, std::size_t count) {
  if (partials.dtype != DType::f32 || partials.numel != 2 * count)
    throw std::invalid_argument("step statistics: a partial sum is one f64 in two f32 elements");
}

OptimizerOps& optimizer_ops(Device device) {
  static CpuOptimizerOps cpu;
  return device.is_cpu() ? static_cast<OptimizerOps&>(cpu) : cuda_optimizer_ops();
}

}  // namespace zt
