// Reduce-scatter and all-gather around a ring of point-to-point messages, for host buffers of the
// MPI backend.
//
// Open MPI 4.1's non-blocking MPI_Ireduce_scatter_block (libnbc, which serves every MPI_I*
// collective) reduces the whole buffer into rank 0 and scatters the chunks from there: rank 0
// receives and adds the full gradient while the others wait, and its link carries it twice. The
// ring moves (p-1)/p of the buffer over every link and spreads the additions evenly; on 2 ranks
// over shared memory it is several times faster (bench/README.md, "reduce-scatter"). The additions
// are MPI's own (MPI_Reduce_local with the communicator's sum op), so bf16/f16 round as before.
// Each step goes in up to 8 pieces of at least 512 KiB (a chunk under 1 MiB goes whole): the link
// carries one piece while the rank adds and passes on the one before, as NCCL's pipelined rings
// do. Every element is added in the same order as without pieces.
#pragma once

#include <mpi.h>

#include <chrono>
#include <span>

#include "comm/host_workspace.h"
#include "core/buffer.h"

namespace zt {

// out <- chunk `rank` of the element-wise sum of every rank's `in` (in.numel = p * out.numel).
// `in` is only read; out may alias chunk `rank` of in (in place). Partial sums go to scratch: two
// chunks on more than 2 ranks, one on 2 ranks in place, none on 2 ranks otherwise. Runs on the comm
// thread; each exchange completes by complete_polling (mpi_progress.h).
void ring_reduce_scatter(MPI_Comm comm, MPI_Op sum, const BufferView& in, const BufferView& out, HostWorkspace& scratch,
                         std::chrono::microseconds poll_interval);

// chunks (p views of in.numel elements, anywhere) <- every rank's chunk, chunk r from this rank's
// `in`; in place (chunks[r] already holds it) when in_place, and `in` is then not read. Open MPI
// 4.1's MPI_Iallgather sends each chunk from its owner to every other rank, so with several ranks
// per host a host's link carries every local rank's chunk to every remote rank; the ring moves
// (p-1)/p of the buffer over every link, as NCCL's does, and as plan --predict assumes.
void ring_all_gather(MPI_Comm comm, const BufferView& in, std::span<const BufferView> chunks, bool in_place,
                     std::chrono::microseconds poll_interval);

}  // namespace zt
