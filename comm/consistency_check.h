// The debug check (comm.debug_check): before a collective, every rank shares the description of
// the collective it is about to run, so that ranks that disagree (a skipped collective, a different
// size or op at the same sequence number) get an error naming both sides instead of a collective
// that silently mixes buffers of different shapes.
#pragma once

#include <mpi.h>

#include <string>

#include "comm/collective.h"

namespace zt {

// Collective over comm (one small MPI_Allgather). Throws CommError on disagreement.
void check_same_collective(MPI_Comm comm, const CollectiveDesc& mine, const std::string& comm_name);

}  // namespace zt
