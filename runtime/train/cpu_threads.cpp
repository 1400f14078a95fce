#include "runtime/train/cpu_threads.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

namespace zt {

int cpu_threads_per_rank(std::int64_t configured, int usable_cpus, int online_cpus, int local_ranks, int world) {
  if (configured > 0) return static_cast<int>(configured);
  usable_cpus = std::max(usable_cpus, 1);
  const bool bound_by_launcher = usable_cpus < online_cpus;
  const int share = bound_by_launcher ? usable_cpus : std::max(usable_cpus / std::max(local_ranks, 1), 1);
  const int threads = world > 1 && share >= 2 ? share - 1 : share;
  return std::max(threads, 1);
}

int cpu_threads_for_this_rank(std::int64_t configured, int local_ranks, int world) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const int usable = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : static_cast<int>(online);
  return cpu_threads_per_rank(configured, usable, static_cast<int>(online), local_ranks, world);
}

}  // namespace zt
