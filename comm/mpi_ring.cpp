#include "comm/mpi_ring.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <span>
#include <stdexcept>

#include "comm/mpi_check.h"
#include "comm/mpi_progress.h"
#include "comm/reduction_ops.h"

namespace zt {

namespace {

// The ring's messages travel on the comm thread's own duplicate communicator, one collective at a
// time, so a single tag cannot meet another collective's messages.
constexpr int kRingTag = 7;

void check_chunk_count(std::size_t numel, const char* what) {
  if (numel > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument(
        fmt::format("{}: a chunk of {} elements exceeds what one MPI call can take ({})", what, numel, INT_MAX));
}

// A ring step's chunk goes in pieces of at least kPieceBytes, at most kMaxPieces of them (a chunk
// under twice kPieceBytes goes whole), one after another: the link carries piece j+1 while piece j
// is added and passed on, instead of idling through each step's addition, and the next step
// starts with the first piece, not after the whole chunk.
constexpr std::size_t kPieceBytes = std::size_t{512} << 10;
constexpr std::size_t kMaxPieces = 8;

// One request per piece in flight each way: a piece's next message is posted once its last one is
// over.
using PieceRequests = std::array<MPI_Request, kMaxPieces>;

struct Pieces {
  std::size_t count = 1, numel = 0;  // numel: all but the last, which holds the rest
  Pieces(std::size_t chunk_numel, DType dtype)
      : count(std::clamp<std::size_t>(chunk_numel * dtype_size(dtype) / kPieceBytes, 1, kMaxPieces)),
        numel((chunk_numel + count - 1) / count) {
    count = numel == 0 ? 1 : (chunk_numel + numel - 1) / numel;
  }
  BufferView of(const BufferView& chunk, std::size_t j) const {
    const std::size_t begin = std::min(j * numel, chunk.numel);
    return chunk.slice(begin, std::min(numel, chunk.numel - begin));
  }
  std::span<MPI_Request> in_use(PieceRequests& requests) const { return std::span(requests).first(count); }
};

}  // namespace

void ring_reduce_scatter(MPI_Comm comm, MPI_Op sum, const BufferView& in, const BufferView& out, HostWorkspace& scratch,
                         std::chrono::microseconds poll_interval) {
  int p = 0;
  int r = 0;
  ZT_MPI_CHECK(MPI_Comm_size(comm, &p));
  ZT_MPI_CHECK(MPI_Comm_rank(comm, &r));
  const std::size_t n = out.numel;
  check_chunk_count(n, "reduce_scatter");
  const MPI_Datatype type = mpi_datatype(in.dtype);
  auto chunk = [&](int c) { return in.slice(static_cast<std::size_t>((c % p + p) % p) * n, n); };
  const bool in_place = out.data == chunk(r).data;
  if (p == 1) {
    if (!in_place) std::copy_n(static_cast<const std::byte*>(in.data), out.bytes(), static_cast<std::byte*>(out.data));
    return;
  }
  const int right = (r + 1) % p;
  const int left = (r + p - 1) % p;
  const int steps = p - 1;
  const BufferView space = scratch.get(in.dtype, (p > 2 ? 2 : in_place ? 1 : 0) * n);
  auto partial = [&](int s) { return space.slice(static_cast<std::size_t>(s % 2) * n, n); };
  // Step s sends the partial sum of chunk r-s-1 to the right and receives the partial sum of chunk
  // r-s-2 from the left, which this rank then adds its own contribution to. After p-1 steps the
  // received chunk is r with every rank's contribution in it. Each step goes piece by piece: once
  // piece j of step s is received and added, it is sent on as piece j of step s+1. Messages between
  // two ranks match in the order they were posted, and both sides post them in (step, piece) order.
  auto send_of = [&](int s) { return s == 0 ? chunk(r - 1) : partial(s - 1); };
  auto recv_of = [&](int s) { return s + 1 == steps && !in_place ? out : partial(s); };
  const Pieces pieces(n, in.dtype);
  PieceRequests sends, recvs;
  sends.fill(MPI_REQUEST_NULL);
  recvs.fill(MPI_REQUEST_NULL);
  auto post = [&](int s, std::size_t j) {
    const BufferView recv = pieces.of(recv_of(s), j), send = pieces.of(send_of(s), j);
    ZT_MPI_CHECK(MPI_Irecv(recv.data, static_cast<int>(recv.numel), type, left, kRingTag, comm, &recvs[j]));
    ZT_MPI_CHECK(MPI_Isend(send.data, static_cast<int>(send.numel), type, right, kRingTag, comm, &sends[j]));
  };
  for (std::size_t j = 0; j < pieces.count; ++j) post(0, j);
  for (int s = 0; s < steps; ++s) {
    const bool last = s + 1 == steps;
    for (std::size_t j = 0; j < pieces.count; ++j) {
      complete_polling(recvs[j], poll_interval);
      const BufferView recv = pieces.of(recv_of(s), j);
      if (last && in_place) {
        const BufferView own = pieces.of(out, j);  // out already holds this rank's chunk
        ZT_MPI_CHECK(MPI_Reduce_local(recv.data, own.data, static_cast<int>(own.numel), type, sum));
      } else {
        const BufferView own = pieces.of(chunk(r - s - 2), j);
        ZT_MPI_CHECK(MPI_Reduce_local(own.data, recv.data, static_cast<int>(recv.numel), type, sum));
      }
      if (last) continue;
      // From step 1 on, step s+1 receives into the buffer step s sent piece j from: that send
      // must be over (at step 0 the wait is only redundant).
      complete_polling(sends[j], poll_interval);
      post(s + 1, j);
    }
  }
  complete_polling(pieces.in_use(sends), poll_interval);
}

void ring_all_gather(MPI_Comm comm, const BufferView& in, std::span<const BufferView> chunks, bool in_place,
                     std::chrono::microseconds poll_interval) {
  int p = 0;
  int r = 0;
  ZT_MPI_CHECK(MPI_Comm_size(comm, &p));
  ZT_MPI_CHECK(MPI_Comm_rank(comm, &r));
  if (chunks.size() != static_cast<std::size_t>(p))
    throw std::invalid_argument(fmt::format("all_gather: {} output chunks on {} ranks", chunks.size(), p));
  check_chunk_count(in.numel, "all_gather");
  const MPI_Datatype type = mpi_datatype(in.dtype);
  auto chunk = [&](int c) { return chunks[static_cast<std::size_t>((c % p + p) % p)]; };
  if (!in_place && in.data != chunk(r).data)
    std::copy_n(static_cast<const std::byte*>(in.data), chunk(r).bytes(), static_cast<std::byte*>(chunk(r).data));
  if (p == 1) return;
  // Step s passes chunk r-s on to the right and receives chunk r-s-1 from the left, into place,
  // piece by piece: a piece received at step s is passed on at step s+1 without waiting for the
  // rest of its chunk.
  const int steps = p - 1;
  const Pieces pieces(in.numel, in.dtype);
  PieceRequests sends, recvs;
  sends.fill(MPI_REQUEST_NULL);
  recvs.fill(MPI_REQUEST_NULL);
  auto post = [&](int s, std::size_t j) {
    const BufferView recv = pieces.of(chunk(r - s - 1), j), send = pieces.of(chunk(r - s), j);
    ZT_MPI_CHECK(MPI_Irecv(recv.data, static_cast<int>(recv.numel), type, (r + p - 1) % p, kRingTag, comm, &recvs[j]));
    ZT_MPI_CHECK(MPI_Isend(send.data, static_cast<int>(send.numel), type, (r + 1) % p, kRingTag, comm, &sends[j]));
  };
  for (std::size_t j = 0; j < pieces.count; ++j) post(0, j);
  for (int s = 0; s + 1 < steps; ++s)
    for (std::size_t j = 0; j < pieces.count; ++j) {
      complete_polling(recvs[j], poll_interval);
      complete_polling(sends[j], poll_interval);  // piece j's request is reused
      post(s + 1, j);
    }
  complete_polling(pieces.in_use(recvs), poll_interval);
  complete_polling(pieces.in_use(sends), poll_interval);
}

}  // namespace zt
