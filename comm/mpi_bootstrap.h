// MPI start-up for zerotrain processes and what the launcher tells each rank.
//
// The MPI comm stream issues collectives from its own worker thread while the main thread may
// create communicators or run other MPI calls, so MPI must run at MPI_THREAD_MULTIPLE; a library
// that cannot provide it is refused with a message saying so, rather than risking corruption.
#pragma once

#include <mpi.h>

#include <string_view>

namespace zt {

// RAII for MPI_Init_thread / MPI_Finalize. When MPI is already initialised (a test main, a host
// program) it only checks the thread level and leaves finalisation to whoever initialised it.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);  // throws zt::UserError below MPI_THREAD_MULTIPLE
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool finalize_ = false;
};

// Whether the MPI library (MPI_Get_library_version's text) has a sound non-blocking ring
// all-reduce: Open MPI 4.0.7, 4.1.2 and later. Before those, libnbc's ring returned wrong sums in
// place (fixed in Open MPI's pull requests 9483/9497), so MpiSession asks for it only then.
bool has_sound_ring_all_reduce(std::string_view library_version);

// Throws zt::UserError naming the level the library provides when it is below MPI_THREAD_MULTIPLE.
void check_mpi_thread_level(int provided);
// Throws zt::UserError when MPI is not initialised, already finalised, or below MPI_THREAD_MULTIPLE.
void require_mpi_ready();

// Where this rank sits: in the communicator, and among the ranks of the same host
// (MPI_Comm_split_type SHARED), which decides the GPU a rank uses.
struct LaunchInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_size = 1;
  // The ranks every host holds when all hosts hold the same number placed host by host (host h:
  // ranks h*n .. h*n+n-1, as mpirun --map-by slot and srun's block distribution place them); 0 when
  // the placement is any other. world_size on one host.
  int ranks_per_host_block = 1;
};

// One host's answer to "does it hold a block of ranks": local_size when its ranks are
// lowest..highest, consecutive and starting at a multiple of local_size; else 0.
int host_rank_block(int local_size, int lowest_rank, int highest_rank);

// Collective over comm.
LaunchInfo query_launch_info(MPI_Comm comm);

}  // namespace zt
