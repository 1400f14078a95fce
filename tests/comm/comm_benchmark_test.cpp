// The comm benchmark on real ranks: a short sweep runs every collective, checks every result
// (no wrong elements), and prints the nccl-tests-style table on rank 0.
#include <gtest/gtest.h>

#include <sstream>

#include "comm/comm_benchmark.h"
#include "core/error.h"
#include "tests/comm/comm_test_util.h"

namespace zt::test {
namespace {

TEST(CommBenchmark, ShortSweepIsCorrectAndPrintsTheTable) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    CommBenchmarkOptions options;
    options.comm.backend = CommBackend::mpi;
    options.comm.timeout_s = 60;
    options.dtype = dtype;
    options.min_bytes = 8;
    options.max_bytes = 64 << 10;
    options.iters = 2;
    std::ostringstream out;
    CommBenchmarkSummary summary = run_comm_benchmark(options, out);
    EXPECT_EQ(summary.wrong_elements, 0u);
    // 8 B .. 64 KiB doubling is 14 sizes; reduce_scatter/all_gather drop those under one element per rank.
    EXPECT_GE(summary.rows, 4u * 14 - 2 * 3);
    EXPECT_LE(summary.rows, 4u * 14);
    std::string table = out.str();
    if (world_rank() == 0) {
      EXPECT_NE(table.find("algbw(GB/s)"), std::string::npos) << table;
      EXPECT_NE(table.find("busbw(GB/s)"), std::string::npos) << table;
      EXPECT_NE(table.find("all_reduce        65536"), std::string::npos) << table;
      EXPECT_NE(table.find("# wrong elements in total: 0"), std::string::npos) << table;
    } else {
      EXPECT_TRUE(table.empty()) << "only rank 0 prints";
    }
  }
}

TEST(CommBenchmark, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::all_reduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::all_gather, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::broadcast, 4), 1.0);
}

TEST(CommBenchmark, AdaptiveIterationsShrinkWithSize) {
  CommBenchmarkOptions options;
  EXPECT_EQ(benchmark_iterations(options, 8), kMaxAdaptiveIters);
  EXPECT_EQ(benchmark_iterations(options, std::size_t{256} << 20), kMinAdaptiveIters);
  EXPECT_EQ(benchmark_iterations(options, std::size_t{64} << 20), 8);
  options.iters = 5;
  EXPECT_EQ(benchmark_iterations(options, 8), 5);
}

TEST(CommBenchmark, ParsesSizesAndOps) {
  EXPECT_EQ(parse_byte_size("8"), 8u);
  EXPECT_EQ(parse_byte_size("64K"), 65536u);
  EXPECT_EQ(parse_byte_size("256MiB"), std::size_t{256} << 20);
  EXPECT_EQ(parse_byte_size("1G"), std::size_t{1} << 30);
  EXPECT_THROW(parse_byte_size("12 parsecs"), UserError);
  EXPECT_THROW(parse_byte_size("M"), UserError);
  EXPECT_EQ(parse_collective_list("all").size(), 4u);
  EXPECT_EQ(parse_collective_list("all_gather,all_reduce"),
            (std::vector<CollectiveKind>{CollectiveKind::all_gather, CollectiveKind::all_reduce}));
  EXPECT_THROW(parse_collective_list("all_reduce,alltoall"), UserError);
}

}  // namespace
}  // namespace zt::test
