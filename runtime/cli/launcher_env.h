// What the launcher (mpirun, srun or another PMI launcher) tells a rank through its environment,
// read before MPI starts; and how a failure every rank meets is reported once.
#pragma once

#include <string>
#include <utility>

namespace zt::cli {

// This process's rank (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID); 0 when started alone.
int launcher_rank();

// The number of ranks the launcher started (OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS; else 1)
// and where that number came from, for messages.
std::pair<int, std::string> launcher_world_size();

// Called by a failing rank just before it prints its error and ends. A mistake every rank makes
// (a config key, a missing data file) is printed by rank 0 alone: the launcher ends the job when
// rank 0 exits or aborts, which ends the other ranks while they wait here. A failure only this
// rank met is printed after the wait (a few seconds), so it is never lost.
void let_rank_zero_report_first();

}  // namespace zt::cli
