#include "comm/consistency_check.h"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "comm/work.h"
#include "comm/mpi_check.h"

namespace zt {

namespace {

constexpr int kFields = 7;
using Packed = std::array<std::int64_t, kFields>;

Packed pack(const CollectiveDesc& d) {
  return {static_cast<std::int64_t>(d.kind),  static_cast<std::int64_t>(d.op),    static_cast<std::int64_t>(d.dtype),
          static_cast<std::int64_t>(d.count), static_cast<std::int64_t>(d.root),  static_cast<std::int64_t>(d.sequence),
          static_cast<std::int64_t>(d.tensors)};
}

CollectiveDesc unpack(const Packed& p) {
  CollectiveDesc d;
  d.kind = static_cast<CollectiveKind>(p[0]);
  d.op = static_cast<ReduceOp>(p[1]);
  d.dtype = static_cast<DType>(p[2]);
  d.count = static_cast<std::size_t>(p[3]);
  d.root = static_cast<int>(p[4]);
  d.sequence = static_cast<std::uint64_t>(p[5]);
  d.tensors = static_cast<int>(p[6]);
  return d;
}

}  // namespace

void check_same_collective(MPI_Comm comm, const CollectiveDesc& mine, const std::string& comm_name) {
  int rank = 0;
  int size = 0;
  ZT_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ZT_MPI_CHECK(MPI_Comm_size(comm, &size));
  Packed packed = pack(mine);
  std::vector<Packed> all(static_cast<std::size_t>(size));
  ZT_MPI_CHECK(MPI_Allgather(packed.data(), kFields, MPI_INT64_T, all.data(), kFields, MPI_INT64_T, comm));
  for (int other = 0; other < size; ++other) {
    if (all[static_cast<std::size_t>(other)] == packed) continue;
    // Every rank sees the same table, so every rank fails, and none enters the real collective.
    throw CommError(fmt::format("ranks disagree on the next collective of communicator '{}' (comm.debug_check): "
                                "rank {} issued {}, but rank {} issued {}",
                                comm_name, rank, mine.str(), other, unpack(all[static_cast<std::size_t>(other)]).str()));
  }
}

}  // namespace zt
