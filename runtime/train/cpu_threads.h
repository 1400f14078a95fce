// How many CPU compute threads (OpenBLAS's) one rank of a CPU run uses.
//
// The rule (train.cpu_threads = 0, the default):
//   cpus  = the CPUs this process may run on (its affinity mask: cgroups, taskset, srun and
//           mpirun binding all show up there);
//   share = cpus when the launcher already gave each rank its own CPUs (the mask is smaller than
//           the machine), else cpus / (ranks on this host);
//   threads = share - 1 when there are several ranks and share >= 2 (the comm thread runs the
//           collectives beside the compute and needs a core of its own to overlap them), else share;
//   at least 1.
// A single-rank run therefore uses every CPU it is given; two ranks on 2 CPUs use 1 each.
// train.cpu_threads = N > 0 sets the count directly.
#pragma once

#include <cstdint>

namespace zt {

int cpu_threads_per_rank(std::int64_t configured, int usable_cpus, int online_cpus, int local_ranks, int world);

// The same with this process's affinity mask and the machine's online CPU count.
int cpu_threads_for_this_rank(std::int64_t configured, int local_ranks, int world);

}  // namespace zt
