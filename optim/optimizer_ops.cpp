#include "optim/optimizer_ops.h"

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

  void finish_step_stats(BufferView grad, BufferView stats, int micro_batches, BufferView, Stream& stream) override {
    cpu_stream(stream).enqueue([=] {
      DeviceStepStats record;
      std::memcpy(&record, stats.data, sizeof record);
      const GradStats local = grad_stats_host(grad.as<float>(), grad.numel);
      record.sum_of_squares = static_cast<float>(local.sum_of_squares);
      record.non_finite = local.non_finite ? 1.0f : 0.0f;
      record.exact_sum_of_squares = local.sum_of_squares;
      record.loss = static_cast<float>(record.loss_accumulator / micro_batches);
      std::memcpy(stats.data, &record, sizeof record);
    });
  }
};

}  // namespace

std::size_t step_stats_scratch_numel() { return 3 * 512; }  // the CUDA reduction's per-block partials

OptimizerOps& optimizer_ops(Device device) {
  static CpuOptimizerOps cpu;
  return device.is_cpu() ? static_cast<OptimizerOps&>(cpu) : cuda_optimizer_ops();
}

}  // namespace zt
