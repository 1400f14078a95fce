// The first gather of a lookup table after an optimizer step, as the rows the next batch reads.
//
// The next forward begins with the embedding lookup, which reads one row of the token table per
// token and the position rows: for GPT-2 124M at 1 x 1024 tokens per rank a few thousand of the
// table's 51 328 rows, while the whole table (77 MB in bf16, a third of the model) is gathered
// (stage 3) or all-gathered after its update (stages 1/2) before that forward can start. The LM
// head, at the forward's end, is the first to read all of it. So when the engine knows the next
// batch's tokens before the update, every rank learns every rank's tokens (a small all-gather),
// and right after the table's update the ranks gather only those rows: each rank contributes the
// elements of the rows that lie in its chunk (packed row by row, padded to the largest rank's
// count so that the gather is an ordinary all-gather), and the parts are placed at their rows in
// the block's buffer. The lookup reads exactly the values the whole gather would have given it.
// The rest of the table follows during the forward, before the head needs it: at stage 3 in
// pieces (param_gatherer.h), at stages 1/2 as one all-gather right after the lookup, behind the
// other blocks' all-gathers that the update issued (engine.h). Where the whole table's gather
// would end within the update anyway, the rows only add bytes: rows_first_choice.h chooses. The
// rows are moved by host code: CPU devices (and the emulated accelerator), like the lookup's
// gradient rows (lookup_rows.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "comm/work.h"
#include "core/buffer.h"
#include "models/block.h"

namespace zt {

// Gathering rows pays only where they are a small part of the table: at most this share of the
// block's padded elements over all ranks (parts padded to the largest) - else the whole block is
// gathered as before. It also bounds the rows' buffers (memory_plan.h).
inline constexpr std::size_t kFirstRowsMaxShareDivisor = 4;

// The most bytes the rows' gather of a block of padded_numel elements takes on a rank (its packed
// part and every rank's, at most the share above) with the tokens' gather (every rank's B x T
// and its vote, as i32), in elements of element_size bytes, over `ranks` ranks.
std::size_t first_rows_buffer_bytes(std::size_t padded_numel, std::size_t element_size, int ranks, int B, int T);

// Where the rows a lookup of some tokens reads lie in its block: the element offsets of their
// first elements, sorted and unique, and each row's width.
struct RowsRead {
  std::vector<std::size_t> starts;
  std::size_t width = 0;
  // Elements of the rows that lie in [lo, hi).
  std::size_t elements_in(std::size_t lo, std::size_t hi) const;
};

// Elements of each rank's part of the rows' gather: the most of the rows' elements that lie in one
// rank's chunk (chunk_numel elements each, `ranks` of them).
std::size_t rows_part_numel(const RowsRead& rows, std::size_t chunk_numel, int ranks);

// Rows of the token table (its tokens are 0 ... that - 1) in a lookup block of block_numel elements.
std::size_t token_rows(const models::LookupRows& rows, std::size_t block_numel);

// The rows that the lookup of `tokens` (sequences of T) reads: each token's row and, where the
// block has a position table, the T position rows. Throws std::invalid_argument for a token outside
// the table or a token count not a multiple of T.
RowsRead rows_read(const models::LookupRows& rows, std::span<const std::int32_t> tokens, int T,
                   std::size_t block_numel);

// Copies the elements of the rows that lie in [lo, hi) from `chunk` (the block's elements [lo, hi))
// to `packed`, in element order; elements are element_size bytes. Returns the count copied.
std::size_t pack_rows(const RowsRead& rows, std::size_t lo, std::size_t hi, const void* chunk, void* packed,
                      std::size_t element_size);

// The inverse over all ranks: rank r's packed part (its chunk [r * chunk_numel, (r + 1) *
// chunk_numel) of the block) at parts + r * stride elements, placed at the rows' elements of
// `block` (the block's padded flat buffer). Elements outside the rows are left as they are.
void place_rows(const RowsRead& rows, std::size_t chunk_numel, int ranks, const void* parts, std::size_t stride,
                void* block, std::size_t element_size);

// One block's rows on their way: this rank's packed part and every rank's (each padded to the
// largest), for one all-gather of packed into parts that the owner launches and keeps in work.
struct RowsGather {
  // Packs the rows that lie in this rank's chunk: `chunk` holds the block's elements
  // [rank * chunk_numel, (rank + 1) * chunk_numel). The buffers come from the pool in the order
  // of `stream` (MemCategory::gathered). Host code: CPU devices only (std::logic_error otherwise).
  RowsGather(RowsRead rows, std::size_t chunk_numel, int rank, int ranks, const void* chunk, Device device,
             DType dtype, Stream& stream, MemoryTracker& tracker);
  // Every rank's part placed at its rows of `block` (the block's padded flat buffer): work must
  // be complete, and the buffers go back to the pool.
  void place(void* block);
  std::size_t parts_numel() const { return stride * static_cast<std::size_t>(ranks); }

  RowsRead read;
  std::size_t chunk_numel = 0;
  int ranks = 0;
  std::size_t stride = 0;  // elements of each rank's part
  Buffer packed, parts;
  Work work;
  bool placed = false;
};

}  // namespace zt
