#include "zero/step_statistics.h"

#include <csignal>
#include <cmath>
#include <cstring>

#include "core/device_ops.h"
#include "optim/optimizer_ops.h"

namespace zt {
namespace {

double load_f64(const float* at) {
  double value = 0.0;
  std::memcpy(&value, at, sizeof value);
  return value;
}

}  // namespace

StepStatistics::StepStatistics(Device device, Stream& compute, MemoryTracker& tracker)
    : compute_(compute),
      stats_(device, DType::f32, step_stats::size, MemCategory::workspace, tracker),
      scratch_(device, DType::f32, step_stats_scratch_numel(), MemCategory::workspace, tracker),
      host_(Buffer::host(DType::f32, step_stats::size, MemCategory::workspace, Buffer::HostMemory::pinned, tracker)) {}

BufferView StepStatistics::loss_accumulator() const { return stats_.slice(step_stats::loss_accumulator, 2); }

void StepStatistics::begin() { fill_zero(loss_accumulator(), compute_); }

AgreedStatistics StepStatistics::agree(BufferView grad_shard, int micro_batches, bool whole_gradient,
                                       int local_stop_signal, Communicator& comm, ExposedTime& exposed,
                                       trace::Timeline* timeline, Work& all_reduce) {
  optimizer_ops(stats_.device()).finish_step_stats(grad_shard, stats_.view(), micro_batches, scratch_.view(),
                                                   compute_);
  if (whole_gradient && comm.rank() != 0) fill_zero(stats_.slice(step_stats::sum_of_squares, 1), compute_);
  // The signals go up from the host through the staging buffer; the last step's read of it is over.
  float* host = host_.data_as<float>();
  host[step_stats::sigterm] = local_stop_signal == SIGTERM ? 1.0f : 0.0f;
  host[step_stats::sigint] = local_stop_signal == SIGINT ? 1.0f : 0.0f;
  copy_async(stats_.slice(step_stats::sigterm, 2), host_.slice(step_stats::sigterm, 2), compute_);

  all_reduce = comm.all_reduce(stats_.slice(0, step_stats::reduced), ReduceOp::sum, compute_);
  if (timeline) timeline->add_collective("all_reduce grad norm, loss", all_reduce);
  exposed.wait(all_reduce, compute_, timeline, [] { return std::pair{std::string("wait grad norm, loss"),
                                                                     nlohmann::json::object()}; });
  copy_async(host_.view(), stats_.view(), compute_);
  compute_.synchronize();  // the step's one read of the device

  AgreedStatistics agreed;
  agreed.sum_of_squares =
      whole_gradient ? load_f64(host + step_stats::exact_sum_of_squares) : host[step_stats::sum_of_squares];
  agreed.non_finite = host[step_stats::non_finite] != 0.0f || !std::isfinite(agreed.sum_of_squares);
  agreed.loss = static_cast<double>(host[step_stats::loss]) / comm.world_size();
  agreed.stop_signal = host[step_stats::sigterm] > 0.0f ? SIGTERM : host[step_stats::sigint] > 0.0f ? SIGINT : 0;
  return agreed;
}

double StepStatistics::agree_eval_loss(Communicator& comm, trace::Timeline* timeline) {
  // The loss slot from the accumulator (no gradient: an empty shard), averaged over ranks.
  fill_zero(stats_.slice(0, step_stats::reduced), compute_);
  optimizer_ops(stats_.device()).finish_step_stats({nullptr, 0, DType::f32, stats_.device()}, stats_.view(), 1,
                                                   scratch_.view(), compute_);
  Work work = comm.all_reduce(stats_.slice(0, step_stats::reduced), ReduceOp::avg, compute_);
  if (timeline) timeline->add_collective("all_reduce eval loss", work);
  work.wait(compute_);
  copy_async(host_.view(), stats_.view(), compute_);
  compute_.synchronize();
  return host_.data_as<float>()[step_stats::loss];
}

}  // namespace zt
