// The rule that gives each rank of a CPU run its compute threads (runtime/train/cpu_threads.h).
#include <gtest/gtest.h>

#include "runtime/train/cpu_threads.h"

namespace zt {
namespace {

// cpu_threads_per_rank(configured, usable_cpus, online_cpus, local_ranks, world)
TEST(CpuThreads, OneRankUsesEveryCpuItIsGiven) {
  EXPECT_EQ(cpu_threads_per_rank(0, 2, 2, 1, 1), 2);
  EXPECT_EQ(cpu_threads_per_rank(0, 64, 64, 1, 1), 64);
  EXPECT_EQ(cpu_threads_per_rank(0, 4, 64, 1, 1), 4) << "taskset / cgroup limits are respected";
}

TEST(CpuThreads, RanksOnAHostSplitTheCpusAndLeaveOneForTheCommThread) {
  EXPECT_EQ(cpu_threads_per_rank(0, 2, 2, 2, 2), 1);
  EXPECT_EQ(cpu_threads_per_rank(0, 16, 16, 2, 2), 7);
  EXPECT_EQ(cpu_threads_per_rank(0, 16, 16, 4, 8), 3) << "4 ranks on this host of a 2-host job";
  EXPECT_EQ(cpu_threads_per_rank(0, 2, 2, 4, 4), 1) << "oversubscribed: never fewer than 1";
}

TEST(CpuThreads, ALauncherBindingIsTheRanksShare) {
  // mpirun/srun bound this rank to 4 of the 16 CPUs: those are its share, not 4 / 4 ranks.
  EXPECT_EQ(cpu_threads_per_rank(0, 4, 16, 4, 4), 3);
  EXPECT_EQ(cpu_threads_per_rank(0, 1, 16, 16, 16), 1);
}

TEST(CpuThreads, TheConfiguredCountWins) {
  EXPECT_EQ(cpu_threads_per_rank(5, 2, 2, 2, 2), 5);
  EXPECT_EQ(cpu_threads_per_rank(1, 64, 64, 1, 1), 1);
}

TEST(CpuThreads, ThisProcessGetsAtLeastOne) { EXPECT_GE(cpu_threads_for_this_rank(0, 1, 1), 1); }

}  // namespace
}  // namespace zt
