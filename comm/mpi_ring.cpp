#include "comm/mpi_ring.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <stdexcept>

#include "comm/mpi_check.h"
#include "comm/mpi_progress.h"
#include "comm/reduction_ops.h"

namespace zt {

namespace {

// The ring's messages travel on the comm thread's own duplicate communicator, one collective at a
// time, so a single tag cannot meet another collective's messages.
constexpr int kRingTag = 7;

int chunk_count(std::size_t numel, const char* what) {
  if (numel > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument(
        fmt::format("{}: a chunk of {} elements exceeds what one MPI call can take ({})", what, numel, INT_MAX));
  return static_cast<int>(numel);
}

}  // namespace

void ring_reduce_scatter(MPI_Comm comm, MPI_Op sum, const BufferView& in, const BufferView& out, HostWorkspace& scratch,
                         std::chrono::microseconds poll_interval) {
  int p = 0;
  int r = 0;
  ZT_MPI_CHECK(MPI_Comm_size(comm, &p));
  ZT_MPI_CHECK(MPI_Comm_rank(comm, &r));
  const std::size_t n = out.numel;
  const int count = chunk_count(n, "reduce_scatter");
  const MPI_Datatype type = mpi_datatype(in.dtype);
  auto chunk = [&](int c) { return in.slice(static_cast<std::size_t>((c % p + p) % p) * n, n); };
  const bool in_place = out.data == chunk(r).data;
  if (p == 1) {
    if (!in_place) std::copy_n(static_cast<const std::byte*>(in.data), out.bytes(), static_cast<std::byte*>(out.data));
    return;
  }
  const int right = (r + 1) % p;
  const int left = (r + p - 1) % p;
  const BufferView space = scratch.get(in.dtype, (p > 2 ? 2 : in_place ? 1 : 0) * n);
  auto partial = [&](int s) { return space.slice(static_cast<std::size_t>(s % 2) * n, n); };
  // Step s sends the partial sum of chunk r-s-1 to the right and receives the partial sum of chunk
  // r-s-2 from the left, which this rank then adds its own contribution to. After p-1 steps the
  // received chunk is r with every rank's contribution in it.
  for (int s = 0; s + 1 < p; ++s) {
    const bool last = s + 2 == p;
    const BufferView send = s == 0 ? chunk(r - 1) : partial(s - 1);
    const BufferView recv = last && !in_place ? out : partial(s);
    std::array<MPI_Request, 2> requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    ZT_MPI_CHECK(MPI_Irecv(recv.data, count, type, left, kRingTag, comm, &requests[0]));
    ZT_MPI_CHECK(MPI_Isend(send.data, count, type, right, kRingTag, comm, &requests[1]));
    complete_polling(requests, poll_interval);
    if (last && in_place)
      ZT_MPI_CHECK(MPI_Reduce_local(recv.data, out.data, count, type, sum));  // out already holds this rank's chunk
    else
      ZT_MPI_CHECK(MPI_Reduce_local(chunk(r - s - 2).data, recv.data, count, type, sum));
  }
}

void ring_all_gather(MPI_Comm comm, const BufferView& in, std::span<const BufferView> chunks, bool in_place,
                     std::chrono::microseconds poll_interval) {
  int p = 0;
  int r = 0;
  ZT_MPI_CHECK(MPI_Comm_size(comm, &p));
  ZT_MPI_CHECK(MPI_Comm_rank(comm, &r));
  if (chunks.size() != static_cast<std::size_t>(p))
    throw std::invalid_argument(fmt::format("all_gather: {} output chunks on {} ranks", chunks.size(), p));
  const int count = chunk_count(in.numel, "all_gather");
  const MPI_Datatype type = mpi_datatype(in.dtype);
  auto chunk = [&](int c) { return chunks[static_cast<std::size_t>((c % p + p) % p)]; };
  if (!in_place && in.data != chunk(r).data)
    std::copy_n(static_cast<const std::byte*>(in.data), chunk(r).bytes(), static_cast<std::byte*>(chunk(r).data));
  // Step s passes chunk r-s on to the right and receives chunk r-s-1 from the left, into place.
  for (int s = 0; s + 1 < p; ++s) {
    std::array<MPI_Request, 2> requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    ZT_MPI_CHECK(MPI_Irecv(chunk(r - s - 1).data, count, type, (r + p - 1) % p, kRingTag, comm, &requests[0]));
    ZT_MPI_CHECK(MPI_Isend(chunk(r - s).data, count, type, (r + 1) % p, kRingTag, comm, &requests[1]));
    complete_polling(requests, poll_interval);
  }
}

}  // namespace zt
