#include "comm/mpi_bootstrap.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>

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

bool has_sound_ring_all_reduce(std::string_view library_version) {
  constexpr std::string_view kPrefix = "Open MPI v";
  const std::size_t at = library_version.find(kPrefix);
  if (at == std::string_view::npos) return false;
  int major = 0, minor = 0, release = 0;
  std::string text(library_version.substr(at + kPrefix.size()));
  if (std::sscanf(text.c_str(), "%d.%d.%d", &major, &minor, &release) < 2) return false;
  if (major != 4) return major > 4;
  return minor == 0 ? release >= 7 : minor > 1 || (minor == 1 && release >= 2);
}

namespace {

// Open MPI's non-blocking collectives (libnbc) choose a binomial tree for MPI_Iallreduce on fewer
// than 4 ranks or in place, which every gradient all-reduce is: rank 0 receives and adds the whole
// buffer, then sends it all back, so the links carry it one direction at a time. Its ring moves
// 2(p-1)/p of the buffer over every link in both directions at once and spreads the additions: on
// 2 ranks over shared memory a 13 MB all-reduce takes about half the time (bench/README.md). So
// the ring is chosen, where the library's ring is sound, unless the user set the parameter (Open
// MPI reads it at MPI_Init; other MPI libraries ignore it). MPI_Get_library_version may be called
// before MPI_Init.
void prefer_ring_all_reduce() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(version, &length) != MPI_SUCCESS) return;
  if (has_sound_ring_all_reduce(std::string_view(version, static_cast<std::size_t>(length))))
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  ZT_MPI_CHECK(MPI_Initialized(&initialized));
  if (initialized) {
    require_mpi_ready();
    return;
  }
  prefer_ring_all_reduce();
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
  int lowest = info.rank, highest = info.rank;
  ZT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, host.get()));
  ZT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &highest, 1, MPI_INT, MPI_MAX, host.get()));
  // Every host must answer with the same block size; any other answer (0 included) means none.
  int block[2] = {host_rank_block(info.local_size, lowest, highest), 0};
  block[1] = -block[0];
  ZT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, block, 2, MPI_INT, MPI_MIN, comm));
  info.ranks_per_host_block = block[0] == -block[1] ? block[0] : 0;
  return info;
}

int host_rank_block(int local_size, int lowest_rank, int highest_rank) {
  const bool block = local_size > 0 && highest_rank - lowest_rank + 1 == local_size && lowest_rank % local_size == 0;
  return block ? local_size : 0;
}

}  // namespace zt
