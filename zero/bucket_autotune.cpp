#include "zero/bucket_autotune.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "zero/shard_optimizer.h"

namespace zt {
namespace {

// The fastest of a few timed reductions of `numel` elements (after one untimed): the least
// disturbed by whatever else the machine does.
double fastest_reduction_ms(Communicator& comm, BufferView data, bool all_reduce, Stream& stream) {
  const std::size_t chunk = data.numel / static_cast<std::size_t>(comm.world_size());
  auto reduce = [&] {
    BufferView mine = data.slice(static_cast<std::size_t>(comm.rank()) * chunk, chunk);
    Work work = all_reduce ? comm.all_reduce(data, ReduceOp::avg, stream)
                           : comm.reduce_scatter(data, mine, ReduceOp::avg, stream);
    work.wait();
  };
  reduce();
  double best = 1e300;
  for (int i = 0; i < 3; ++i) {
    comm.barrier(stream).wait();
    const auto start = std::chrono::steady_clock::now();
    reduce();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

BucketTimings measure_bucket_timings(Communicator& comm, DType dtype, bool all_reduce, std::size_t max_numel,
                                     double backward_ms, Stream& stream, MemoryTracker& tracker) {
  const std::size_t n = static_cast<std::size_t>(comm.world_size());
  const std::size_t small = 256 * n;
  const std::size_t large = std::max(small * 2, std::min<std::size_t>(max_numel, std::size_t{1} << 22) / n * n);
  Buffer data(comm.device(), dtype, large, MemCategory::workspace, stream, tracker);
  const double small_ms = fastest_reduction_ms(comm, data.slice(0, small), all_reduce, stream);
  const double large_ms = fastest_reduction_ms(comm, data.view(), all_reduce, stream);
  const double bytes_between = static_cast<double>((large - small) * dtype_size(dtype));
  const double ms_per_byte = std::max(0.0, (large_ms - small_ms) / bytes_between);
  const double latency_ms = std::max(0.0, small_ms - static_cast<double>(small * dtype_size(dtype)) * ms_per_byte);
  // The ranks' average, so that every rank chooses the same size.
  const std::vector<float> local = {static_cast<float>(latency_ms), static_cast<float>(ms_per_byte * 1e6),
                                    static_cast<float>(backward_ms)};
  Buffer agreed(comm.device(), DType::f32, local.size(), MemCategory::workspace, stream, tracker);
  upload_f32(agreed.view(), local.data(), stream, tracker);
  comm.all_reduce(agreed.view(), ReduceOp::avg, stream).wait();
  const std::vector<float> mean = download_f32(agreed.view(), stream, tracker);
  return {mean[0], mean[1] * 1e-6, mean[2]};
}

BucketSizeChoice choose_bucket_size(const BucketTimings& t, std::size_t gradient_numel, std::size_t element_bytes,
                                    std::size_t min_numel, std::size_t max_numel) {
  const double V = static_cast<double>(gradient_numel);
  const double comm_ms = V * static_cast<double>(element_bytes) * t.ms_per_byte;
  const std::string inputs =
      fmt::format("latency {:.3f} ms, {:.1f} MB/s, backward {:.1f} ms, {} gradient elements: reductions of them all "
                  "take {:.1f} ms plus the latencies",
                  t.latency_ms, t.ms_per_byte > 0 ? 1e-3 / t.ms_per_byte : 0.0, t.backward_ms, gradient_numel, comm_ms);
  double size = 0.0;
  std::string regime;
  if (t.ms_per_byte <= 0.0 || t.latency_ms <= 0.0) {
    size = static_cast<double>(max_numel);
    regime = "the timings show no cost per byte or per reduction, so the largest size";
  } else if (comm_ms < 0.8 * t.backward_ms) {
    size = V * t.latency_ms / (0.8 * t.backward_ms - comm_ms);
    regime = "backward is longer: the smallest buckets whose reductions fit in 80 % of backward";
  } else {
    size = std::sqrt(V * t.latency_ms / (static_cast<double>(element_bytes) * t.ms_per_byte));
    regime = "communication is longer: the size that minimises latencies plus the last bucket's tail";
  }
  const auto chosen = static_cast<std::size_t>(std::llround(
      std::clamp(size, static_cast<double>(min_numel), static_cast<double>(std::max(min_numel, max_numel)))));
  return {chosen, fmt::format("{} ({:.0f} elements; {}; clamped to [{}, {}])", regime, size, inputs, min_numel,
                              max_numel)};
}

}  // namespace zt
