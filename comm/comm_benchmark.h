// `zerotrain bench-comm`: each collective over a range of sizes on one backend, printed as an
// nccl-tests-style table (size, count, dtype, time, algbw, busbw, wrong elements).
//
// size is the larger buffer of the collective in bytes, as in nccl-tests: the buffer of all_reduce
// and broadcast, the input of reduce_scatter, the output of all_gather (counts rounded down to a
// multiple of the world size for those two). time is the median over iterations of issue + wait,
// each iteration started after a barrier, then the maximum over ranks. algbw = size / time;
// busbw = algbw * 2(n-1)/n for all_reduce, * (n-1)/n for reduce_scatter and all_gather, * 1 for
// broadcast. Each size is first run once with known values and checked: #wrong counts the wrong
// output elements over all ranks.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string_view>
#include <vector>

#include "comm/collective.h"
#include "comm/comm_options.h"
#include "core/device.h"

namespace zt {

struct CommBenchmarkOptions {
  CommOptions comm;
  Device device = Device::cpu();
  std::vector<CollectiveKind> ops = {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                     CollectiveKind::all_gather, CollectiveKind::broadcast};
  DType dtype = DType::f32;
  std::size_t min_bytes = 8;
  std::size_t max_bytes = std::size_t{256} << 20;  // doubling from min_bytes up to this
  // Timed iterations per size; 0 picks them by size: about kAdaptiveBytes per size, clamped to
  // [kMinAdaptiveIters, kMaxAdaptiveIters], so the full sweep stays short on small machines.
  int iters = 0;
  int warmup = 1;
};

inline constexpr std::size_t kAdaptiveBytes = std::size_t{512} << 20;
inline constexpr int kMinAdaptiveIters = 3;
inline constexpr int kMaxAdaptiveIters = 40;

int benchmark_iterations(const CommBenchmarkOptions& options, std::size_t bytes);
double bus_bandwidth_factor(CollectiveKind kind, int world_size);

struct CommBenchmarkSummary {
  std::size_t rows = 0;
  std::size_t wrong_elements = 0;  // over all rows and ranks
};

// Collective over MPI_COMM_WORLD; rank 0 writes the table to out. Needs an MpiSession.
CommBenchmarkSummary run_comm_benchmark(const CommBenchmarkOptions& options, std::ostream& out);

// "8", "8B", "64K", "64KiB", "1M", "256MiB", "1G": bytes. Throws zt::UserError otherwise.
std::size_t parse_byte_size(std::string_view text);
// "all" or a comma-separated list of all_reduce, reduce_scatter, all_gather, broadcast.
std::vector<CollectiveKind> parse_collective_list(std::string_view text);

}  // namespace zt
