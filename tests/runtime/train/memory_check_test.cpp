// The start-up memory check: reading what the host has, and the message when the plan exceeds it.
// (tests/reliability/out_of_memory_test.sh runs it end to end with a model no machine can hold.)
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runtime/train/memory_check.h"

namespace zt {
namespace {

TEST(MemoryCheck, ParsesMemAvailable) {
  EXPECT_EQ(parse_mem_available("MemTotal:       16384000 kB\nMemFree:  100 kB\nMemAvailable:    8192000 kB\n"),
            std::int64_t{8192000} * 1024);
  EXPECT_EQ(parse_mem_available("MemTotal: 1 kB\n"), std::nullopt);
  EXPECT_EQ(parse_mem_available("MemAvailable: lots\n"), std::nullopt);
  EXPECT_EQ(parse_mem_available("MemAvailable: 99999999999999999999 kB\n"), std::nullopt);
}

TEST(MemoryCheck, HostMemoryIsReadAndAtMostMemTotal) {
  std::optional<AvailableMemory> host = available_host_memory();
  ASSERT_TRUE(host.has_value()) << "Linux has /proc/meminfo";
  EXPECT_GT(host->bytes, 0);
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t total_kib = 0;
  in >> key >> total_kib;
  ASSERT_EQ(key, "MemTotal:");
  EXPECT_LE(host->bytes, total_kib * 1024) << host->source;
}

TEST(MemoryCheck, ShortfallNamesBothNumbersAndTheParts) {
  MemoryPlan plan;
  plan.params = 4LL << 30;
  plan.grads = 4LL << 30;
  plan.optimizer = 12LL << 30;
  plan.buckets = 1LL << 30;
  plan.activations = 3LL << 30;
  const AvailableMemory host{16LL << 30, "MemAvailable in /proc/meminfo"};
  EXPECT_EQ(memory_shortfall(plan, 1, host, "host memory"),
            "not enough memory: the run needs 24.00 GiB per rank (20.00 GiB model states, 1.00 GiB buckets, 3.00 GiB "
            "activations, 0 B gathered parameters; `zerotrain plan` shows the plan) but host memory has 16.00 GiB "
            "available (MemAvailable in /proc/meminfo); use a smaller model or micro batch, a higher "
            "zero_optimization.stage, or more ranks on more machines");
  const std::string two = memory_shortfall(plan, 2, AvailableMemory{40LL << 30, "x"}, "host memory").value_or("");
  EXPECT_NE(two.find("24.00 GiB per rank x 2 ranks on this host = 48.00 GiB"), std::string::npos) << two;
  EXPECT_EQ(memory_shortfall(plan, 1, AvailableMemory{24LL << 30, "x"}, "host memory"), std::nullopt);
  EXPECT_EQ(planned_rank_bytes(plan), 24LL << 30);
}

}  // namespace
}  // namespace zt
