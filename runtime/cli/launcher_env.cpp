#include "runtime/cli/launcher_env.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace zt::cli {

int launcher_rank() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* value = std::getenv(variable)) return std::atoi(value);
  return 0;
}

std::pair<int, std::string> launcher_world_size() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    if (const char* value = std::getenv(variable)) {
      const int n = std::atoi(value);
      if (n > 0) return {n, fmt::format("from {}", variable)};
    }
  }
  return {1, "not started by mpirun or srun"};
}

void let_rank_zero_report_first() {
  // Long enough for mpirun or srun --kill-on-bad-exit to end this rank after rank 0 failed (well
  // under a second on one host, about a second across hosts).
  constexpr auto kWait = std::chrono::seconds(3);
  if (launcher_rank() != 0) std::this_thread::sleep_for(kWait);
}

}  // namespace zt::cli
