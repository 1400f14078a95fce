#include "runtime/train/cpu_contention_watch.h"

#include <gtest/gtest.h>

namespace zt {
namespace {

StepStats step_with(double step_ms, std::optional<double> wait_ms) {
  StepStats stats;
  stats.step_ms = step_ms;
  stats.cpu_wait_ms = wait_ms;
  stats.comm_cpu_ms = 1.0;
  return stats;
}

// Feeds `count` steps from `first` on; returns the warnings given.
std::vector<std::string> feed(CpuContentionWatch& watch, std::int64_t first, int count, double step_ms,
                              std::optional<double> wait_ms) {
  std::vector<std::string> warnings;
  for (std::int64_t s = first; s < first + count; ++s)
    if (auto warning = watch.add(s, step_with(step_ms, wait_ms))) warnings.push_back(*warning);
  return warnings;
}

const CpuAffinity kBoundToOne{1, "3", 8};
const CpuAffinity kCpuset{4, "0-3", 8};
const CpuAffinity kUnbound{8, "0-7", 8};

TEST(CpuContentionWatch, QuietRanksGetNoWarning) {
  CpuContentionWatch watch(kBoundToOne);
  EXPECT_TRUE(feed(watch, 1, 200, 100.0, 9.0).empty());  // 9 % < kWarnShare
}

TEST(CpuContentionWatch, WarnsOnceAtTheEndOfAWindowAndSaysWhatToDo) {
  CpuContentionWatch watch(kBoundToOne);
  // The first step (start-up) is not counted: the window is steps 2-21.
  std::vector<std::string> warnings = feed(watch, 1, CpuContentionWatch::kWindowSteps, 100.0, 50.0);
  EXPECT_TRUE(warnings.empty());
  warnings = feed(watch, CpuContentionWatch::kWindowSteps + 1, 100, 100.0, 50.0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("steps 2-21:"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("waited 1000 ms for a CPU in 2000 ms of steps (50% of"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("bound to CPU 3 of 8"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("--bind-to none"), std::string::npos) << warnings[0];
}

TEST(CpuContentionWatch, AnUnboundRankIsToldTheMachineIsShortOfCores) {
  CpuContentionWatch watch(kUnbound);
  std::vector<std::string> warnings = feed(watch, 1, 1 + CpuContentionWatch::kWindowSteps, 10.0, 2.0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("fewer free cores"), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings[0].find("--bind-to none"), std::string::npos) << warnings[0];
}

TEST(CpuContentionWatch, ARankInACpusetIsToldItsCpusAreBusy) {
  CpuContentionWatch watch(kCpuset);
  std::vector<std::string> warnings = feed(watch, 1, 1 + CpuContentionWatch::kWindowSteps, 10.0, 2.0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("CPUs 0-3 of 8"), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings[0].find("--bind-to none"), std::string::npos) << warnings[0];
}

TEST(CpuContentionWatch, ContentionLaterInTheRunIsSeen) {
  CpuContentionWatch watch(kBoundToOne);
  EXPECT_TRUE(feed(watch, 1, 1 + 3 * CpuContentionWatch::kWindowSteps, 100.0, 1.0).empty());
  EXPECT_EQ(feed(watch, 62, CpuContentionWatch::kWindowSteps, 100.0, 30.0).size(), 1u);
}

TEST(CpuContentionWatch, SilentWhereTheKernelPublishesNoWaitTime) {
  CpuContentionWatch watch(kBoundToOne);
  EXPECT_TRUE(feed(watch, 1, 100, 100.0, std::nullopt).empty());
}

TEST(CpuContention, WaitsTheTwoThreadsMayCauseEachOtherAreNotBlamedOnOtherWork) {
  // The compute thread waited 10 ms while the comm thread ran 8: at least 2 ms were someone else's.
  EXPECT_DOUBLE_EQ(wait_for_other_work_ms({10.0, 100.0}, {3.0, 8.0}), 2.0);
  // A comm thread that waited 3 ms while compute ran 100 may have waited for compute only.
  EXPECT_DOUBLE_EQ(wait_for_other_work_ms({0.0, 100.0}, {3.0, 8.0}), 0.0);
  // Waits beyond the other thread's running time are other work's, on both sides.
  EXPECT_DOUBLE_EQ(wait_for_other_work_ms({50.0, 20.0}, {40.0, 5.0}), 45.0 + 20.0);
}

TEST(CpuContention, ThisThreadsWaitAndAffinityAreRead) {
  const CpuAffinity affinity = process_cpu_affinity();
  EXPECT_GE(affinity.count, 1);
  EXPECT_LE(affinity.count, affinity.online_cpus);
  EXPECT_FALSE(affinity.list.empty());
  // Linux publishes the wait (CONFIG_SCHED_INFO) on every kernel the project supports; it only grows.
  const std::optional<double> before = thread_run_queue_wait_ms();
  ASSERT_TRUE(before.has_value());
  const std::optional<double> after = thread_run_queue_wait_ms();
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(*after, *before);
}

}  // namespace
}  // namespace zt
