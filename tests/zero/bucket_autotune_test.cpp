// reduce_bucket_size: auto — the choice of size from the measured timings (the formulas of
// zero/bucket_autotune.h on hand-computed cases).
#include "zero/bucket_autotune.h"

#include <gtest/gtest.h>

namespace zt {
namespace {

constexpr std::size_t kMin = 65'536, kMax = 6'553'600;
constexpr std::size_t kElements = 10'000'000;  // fp32 gradient: 40 MB

TEST(AutoBucketSize, BackwardLongerTakesTheSmallestBucketsThatFit) {
  // 1 ms per reduction, 1 GB/s: all bytes take 40 ms; 80 % of a 100 ms backward leaves 40 ms for
  // latencies, so V * 1 ms / 40 ms = 250000 elements per bucket (40 buckets).
  BucketSizeChoice choice = choose_bucket_size({1.0, 1e-6, 100.0}, kElements, 4, kMin, kMax);
  EXPECT_EQ(choice.bucket_numel, 250'000u);
  EXPECT_NE(choice.reason.find("backward is longer"), std::string::npos) << choice.reason;
}

TEST(AutoBucketSize, CommunicationLongerBalancesLatencyAgainstTheTail) {
  // 100 MB/s: all bytes take 400 ms > 80 ms: sqrt(V * 1 ms / (4 B * 1e-5 ms/B)) = 500000.
  BucketSizeChoice choice = choose_bucket_size({1.0, 1e-5, 100.0}, kElements, 4, kMin, kMax);
  EXPECT_EQ(choice.bucket_numel, 500'000u);
  EXPECT_NE(choice.reason.find("communication is longer"), std::string::npos) << choice.reason;
}

TEST(AutoBucketSize, ClampedToTheRange) {
  EXPECT_EQ(choose_bucket_size({0.001, 1e-6, 100.0}, kElements, 4, kMin, kMax).bucket_numel, kMin);
  EXPECT_EQ(choose_bucket_size({1000.0, 1e-5, 100.0}, kElements, 4, kMin, kMax).bucket_numel, kMax);
  // Timings without a cost per byte (a measurement lost in noise): the largest size.
  EXPECT_EQ(choose_bucket_size({1.0, 0.0, 100.0}, kElements, 4, kMin, kMax).bucket_numel, kMax);
}

}  // namespace
}  // namespace zt
