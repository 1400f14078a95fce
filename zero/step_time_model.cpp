#include "zero/step_time_model.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "core/dtype.h"
#include "zero/memory_plan.h"

namespace zt {
namespace {

// (steps)·α + fraction·S/β with fraction = steps/N: a ring of N ranks takes N-1 steps per phase.
double ring_seconds(double bytes, int world_size, const LinkModel& link, int phases) {
  if (world_size <= 1) return 0.0;
  const double steps = static_cast<double>(phases) * (world_size - 1);
  return steps * link.latency_s + steps / world_size * bytes / link.bytes_per_s;
}

double sum(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

}  // namespace

double all_reduce_seconds(double bytes, int world_size, const LinkModel& link) {
  return ring_seconds(bytes, world_size, link, 2);
}

double reduce_scatter_seconds(double bytes, int world_size, const LinkModel& link) {
  return ring_seconds(bytes, world_size, link, 1);
}

double all_gather_seconds(double bytes, int world_size, const LinkModel& link) {
  return ring_seconds(bytes, world_size, link, 1);
}

StepTimePrediction predict_step_time(const StepTimeInputs& in) {
  if (in.stage < 0 || in.stage > 3) throw std::invalid_argument("predict_step_time: stage must be 0-3");
  if (in.world_size < 1 || in.micro_batches < 1)
    throw std::invalid_argument("predict_step_time: world_size and micro_batches must be at least 1");
  if (!(in.micro_batch_compute_s >= 0.0) || !(in.link.latency_s >= 0.0))
    throw std::invalid_argument("predict_step_time: compute time and latency must not be negative");
  if (in.world_size > 1 && !(in.link.bytes_per_s > 0.0))
    throw std::invalid_argument("predict_step_time: the link bandwidth must be positive");
  if (in.stage > 0 && in.bucket_compute_bytes.size() != in.bucket_comm_bytes.size())
    throw std::invalid_argument("predict_step_time: one compute-dtype size per bucket is needed at stages 1-3");

  const int n = in.world_size;
  const double t_fwd = in.micro_batch_compute_s / 3.0;
  const double t_bwd = in.micro_batch_compute_s - t_fwd;
  const double g = in.micro_batches;

  std::vector<double> reduce, gather;
  for (double bytes : in.bucket_comm_bytes)
    reduce.push_back(in.stage == 0 ? all_reduce_seconds(bytes, n, in.link) : reduce_scatter_seconds(bytes, n, in.link));
  if (in.stage > 0)
    for (double bytes : in.bucket_compute_bytes) gather.push_back(all_gather_seconds(bytes, n, in.link));
  const double r = sum(reduce), a = sum(gather);
  const double c_last = reduce.empty() ? 0.0 : reduce.back();
  const double a_first = gather.empty() ? 0.0 : gather.back();
  const double statistics = n > 1 ? 2.0 * (n - 1) * in.link.latency_s : 0.0;

  const double exposed_gather = a_first + std::max(0.0, a - a_first - t_fwd);
  StepTimePrediction p;
  p.compute_s = g * in.micro_batch_compute_s;
  switch (in.stage) {
    case 0:
      p.comm_s = r + statistics;
      p.exposed_s = std::max(0.0, r - c_last - t_bwd) + c_last + statistics;
      break;
    case 1:
    case 2:
      p.comm_s = r + a + statistics;
      p.exposed_s = std::max(0.0, r - c_last - t_bwd) + c_last + exposed_gather + statistics;
      break;
    default:
      p.comm_s = r + 2.0 * g * a + statistics;
      p.exposed_s = g * exposed_gather + (g - 1.0) * std::max(0.0, a - t_bwd) +
                    std::max(0.0, a + r - c_last - t_bwd) + c_last + statistics;
      break;
  }
  p.step_s = p.compute_s + p.exposed_s;
  p.step_without_overlap_s = p.compute_s + p.comm_s;
  return p;
}

StepTimeInputs step_time_inputs(const models::Model& model, const ZeroOptions& options, int world_size,
                                double micro_batch_compute_s, const LinkModel& link) {
  const PartitionPlan plan = make_partition_plan(model, options, world_size);
  StepTimeInputs in;
  in.stage = options.stage;
  in.world_size = world_size;
  in.micro_batches = options.gradient_accumulation_steps;
  in.micro_batch_compute_s = micro_batch_compute_s;
  in.link = link;
  const double comm_size = static_cast<double>(dtype_size(options.comm_dtype));
  const double compute_size = static_cast<double>(dtype_size(options.compute_dtype));
  const int plan_world = options.stage == 0 ? 1 : world_size;  // stage 0 partitions nothing (make_partition_plan)
  for (std::size_t k = 0; k < plan.buckets().size(); ++k) {
    const double numel = static_cast<double>(plan.bucket(k).numel(plan_world));
    in.bucket_comm_bytes.push_back(numel * comm_size);
    if (options.stage > 0) in.bucket_compute_bytes.push_back(numel * compute_size);
  }
  return in;
}

}  // namespace zt
