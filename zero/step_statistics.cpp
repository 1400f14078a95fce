#include "zero/step_statistics.h"

#include <algorithm>
#include <csignal>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "core/device_ops.h"
#include "optim/optimizer_ops.h"

namespace zt {
namespace {

DeviceStepStats read_record(const Buffer& host) {
  DeviceStepStats record;
  std::memcpy(&record, host.data(), sizeof record);
  return record;
}

}  // namespace

StepStatistics::StepStatistics(Device device, Stream& compute, std::size_t parts, MemoryTracker& tracker)
    : compute_(compute),
      stats_(device, DType::f32, step_stats::size, MemCategory::workspace, tracker),
      partials_(device, DType::f32, 2 * parts, MemCategory::workspace, tracker),
      scratch_(device, DType::f32, step_stats_scratch_numel(), MemCategory::workspace, tracker),
      host_(Buffer::host(DType::f32, step_stats::size, MemCategory::workspace, Buffer::HostMemory::pinned, tracker)),
      measured_(parts, false) {}

BufferView StepStatistics::loss_accumulator() const { return stats_.slice(step_stats::loss_accumulator, 2); }

void StepStatistics::begin() {
  fill_zero(loss_accumulator(), compute_);
  measured_.assign(measured_.size(), false);
}

void StepStatistics::measure(std::size_t part, BufferView grad) {
  if (measured_.at(part)) throw std::logic_error("step statistics: a part of the gradient measured twice in a step");
  measured_[part] = true;
  optimizer_ops(stats_.device()).sum_of_squares(grad, partials_.slice(2 * part, 2), scratch_.view(), compute_);
}

AgreedStatistics StepStatistics::agree(int micro_batches, bool whole_gradient, int local_stop_signal,
                                       Communicator& comm, ExposedTime& exposed, trace::Timeline* timeline,
                                       Work& all_reduce) {
  if (std::find(measured_.begin(), measured_.end(), false) != measured_.end())
    throw std::logic_error("step statistics: a part of the gradient was not measured");
  optimizer_ops(stats_.device()).finish_step_stats(partials_.view(), stats_.view(), micro_batches, compute_);
  if (whole_gradient && comm.rank() != 0) fill_zero(stats_.slice(step_stats::sum_of_squares, 1), compute_);
  // The signals go up from the host through the staging buffer; the last step's read of it is over.
  const float signals[step_stats::signals] = {local_stop_signal == SIGTERM ? 1.0f : 0.0f,
                                              local_stop_signal == SIGINT ? 1.0f : 0.0f,
                                              local_stop_signal == SIGUSR1 ? 1.0f : 0.0f};
  std::memcpy(static_cast<char*>(host_.data()) + offsetof(DeviceStepStats, sigterm), signals, sizeof signals);
  copy_async(stats_.slice(step_stats::sigterm, step_stats::signals), host_.slice(step_stats::sigterm, step_stats::signals),
             compute_);

  all_reduce = comm.all_reduce(stats_.slice(0, step_stats::reduced), ReduceOp::sum, compute_);
  if (timeline) timeline->add_collective("all_reduce grad norm, loss", all_reduce);
  exposed.wait(all_reduce, compute_, timeline, [] { return std::pair{std::string("wait grad norm, loss"),
                                                                     nlohmann::json::object()}; });
  copy_async(host_.view(), stats_.view(), compute_);
  compute_.synchronize();  // the step's one read of the device

  const DeviceStepStats record = read_record(host_);
  AgreedStatistics agreed;
  agreed.sum_of_squares = whole_gradient ? record.exact_sum_of_squares : record.sum_of_squares;
  agreed.non_finite = record.non_finite != 0.0f || !std::isfinite(agreed.sum_of_squares);
  agreed.loss = static_cast<double>(record.loss) / comm.world_size();
  agreed.stop_signal = record.sigterm > 0.0f   ? SIGTERM
                       : record.sigint > 0.0f ? SIGINT
                       : record.sigusr1 > 0.0f ? SIGUSR1
                                               : 0;
  return agreed;
}

double StepStatistics::agree_eval_loss(Communicator& comm, trace::Timeline* timeline) {
  // The loss slot from the accumulator (no gradient: an empty shard), averaged over ranks.
  fill_zero(stats_.slice(0, step_stats::reduced), compute_);
  optimizer_ops(stats_.device()).finish_step_stats(partials_.slice(0, 0), stats_.view(), 1, compute_);
  Work work = comm.all_reduce(stats_.slice(0, step_stats::reduced), ReduceOp::avg, compute_);
  if (timeline) timeline->add_collective("all_reduce eval loss", work);
  work.wait(compute_);
  copy_async(host_.view(), stats_.view(), compute_);
  compute_.synchronize();
  return read_record(host_).loss;
}

}  // namespace zt
