#include "comm/mpi_bootstrap.h"

#include <fmt/format.h>

#include <cstdlib>

#include <string_view>

#include "comm/mpi_handles.h"
#include "core/error.h"
#include "comm/mpi_check.h"

namespace zt {

namespace {
std::string_view thread_level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
  return "an unknown thread level";
}
}  // namespace

void check_mpi_thread_level(int provided) {
  if (provided >= MPI_THREAD_MULTIPLE) return;
  throw UserError(fmt::format(
      "the MPI library provides only {}, but zerotrain needs MPI_THREAD_MULTIPLE: its comm stream issues MPI "
      "collectives from a worker thread while the main thread keeps working (Open MPI: use a build configured "
      "with thread support, see `ompi_info | grep -i thread`)",
      thread_level_name(provided)));
}

namespace {

// Open MPI 4.1's default MPI_Reduce_scatter_block on few ranks reduces everything to rank 0 and
// scatters from there: rank 0's link carries the whole gradient twice while the others idle
// (measured across simulated hosts: 20.5 MB vs 13.6 MB per step each way, bench/README.md).
// Recursive halving moves the same bytes over every link. ZeRO-2/3 reduce-scatter every bucket,
// so it is chosen unless the user set these parameters (Open MPI reads them at MPI_Init).
void prefer_balanced_reduce_scatter() {
  if (std::getenv("OMPI_MCA_coll_tuned_reduce_scatter_block_algorithm")) return;
  setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", /*overwrite=*/0);
  setenv("OMPI_MCA_coll_tuned_reduce_scatter_block_algorithm", "3", /*overwrite=*/0);
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  ZT_MPI_CHECK(MPI_Initialized(&initialized));
  if (initialized) {
    require_mpi_ready();
    return;
  }
  prefer_balanced_reduce_scatter();
  int provided = 0;
  ZT_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
  // Errors on MPI_COMM_WORLD are returned, so that checked calls can say what failed.
  ZT_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  try {
    check_mpi_thread_level(provided);
  } catch (...) {
    MPI_Finalize();
    throw;
  }
  finalize_ = true;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  if (finalize_ && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) MPI_Finalize();
}

void require_mpi_ready() {
  int initialized = 0;
  int finalized = 0;
  ZT_MPI_CHECK(MPI_Initialized(&initialized));
  ZT_MPI_CHECK(MPI_Finalized(&finalized));
  if (!initialized || finalized)
    throw UserError(fmt::format("a communicator was created while MPI is {} (create an MpiSession first and "
                                "destroy communicators before it ends)",
                                finalized ? "already finalised" : "not initialised"));
  int provided = 0;
  ZT_MPI_CHECK(MPI_Query_thread(&provided));
  check_mpi_thread_level(provided);
}

LaunchInfo query_launch_info(MPI_Comm comm) {
  LaunchInfo info;
  ZT_MPI_CHECK(MPI_Comm_rank(comm, &info.rank));
  ZT_MPI_CHECK(MPI_Comm_size(comm, &info.world_size));
  MPI_Comm host_comm = MPI_COMM_NULL;
  ZT_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, info.rank, MPI_INFO_NULL, &host_comm));
  MpiComm host(host_comm);
  ZT_MPI_CHECK(MPI_Comm_rank(host.get(), &info.local_rank));
  ZT_MPI_CHECK(MPI_Comm_size(host.get(), &info.local_size));
  return info;
}

}  // namespace zt
