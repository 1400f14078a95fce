#include "zero/first_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace zt {
namespace {

// Calls part(begin, end) for each row's elements that lie in [lo, hi), in element order.
template <typename Part>
void for_each_part_in(const RowsRead& rows, std::size_t lo, std::size_t hi, Part part) {
  for (std::size_t start : rows.starts) {
    const std::size_t begin = std::max(start, lo), end = std::min(start + rows.width, hi);
    if (begin < end) part(begin, end);
  }
}

}  // namespace

std::size_t RowsRead::elements_in(std::size_t lo, std::size_t hi) const {
  std::size_t count = 0;
  for_each_part_in(*this, lo, hi, [&](std::size_t begin, std::size_t end) { count += end - begin; });
  return count;
}

std::size_t first_rows_buffer_bytes(std::size_t padded_numel, std::size_t element_size, int ranks, int B, int T) {
  const std::size_t parts = padded_numel / kFirstRowsMaxShareDivisor;
  const std::size_t own = parts / static_cast<std::size_t>(ranks);
  // Each rank's tokens and its vote (rows_first_choice.h).
  const std::size_t tokens =
      static_cast<std::size_t>(ranks + 1) * (static_cast<std::size_t>(B) * static_cast<std::size_t>(T) + 1);
  return (parts + own) * element_size + tokens * sizeof(std::int32_t);
}

std::size_t rows_part_numel(const RowsRead& rows, std::size_t chunk_numel, int ranks) {
  std::size_t most = 0;
  for (int r = 0; r < ranks; ++r)
    most = std::max(most, rows.elements_in(static_cast<std::size_t>(r) * chunk_numel,
                                           static_cast<std::size_t>(r + 1) * chunk_numel));
  return most;
}

std::size_t token_rows(const models::LookupRows& rows, std::size_t block_numel) {
  return ((rows.position_table ? *rows.position_table : block_numel) - rows.token_table) / rows.width;
}

RowsRead rows_read(const models::LookupRows& rows, std::span<const std::int32_t> tokens, int T,
                   std::size_t block_numel) {
  if (T <= 0 || tokens.size() % static_cast<std::size_t>(T) != 0)
    throw std::invalid_argument("first rows: the tokens are not whole sequences");
  const std::size_t table_rows = token_rows(rows, block_numel);
  RowsRead read;
  read.width = rows.width;
  for (std::int32_t token : tokens) {
    if (token < 0 || static_cast<std::size_t>(token) >= table_rows)
      throw std::invalid_argument(fmt::format("first rows: token {} is outside the table of {} rows", token, table_rows));
    read.starts.push_back(rows.token_table + static_cast<std::size_t>(token) * rows.width);
  }
  if (rows.position_table)
    for (int p = 0; p < T; ++p) read.starts.push_back(*rows.position_table + static_cast<std::size_t>(p) * rows.width);
  std::sort(read.starts.begin(), read.starts.end());
  read.starts.erase(std::unique(read.starts.begin(), read.starts.end()), read.starts.end());
  if (!read.starts.empty() && read.starts.back() + read.width > block_numel)
    throw std::invalid_argument("first rows: a row beyond the block");
  return read;
}

std::size_t pack_rows(const RowsRead& rows, std::size_t lo, std::size_t hi, const void* chunk, void* packed,
                      std::size_t element_size) {
  const auto* from = static_cast<const unsigned char*>(chunk);
  auto* to = static_cast<unsigned char*>(packed);
  std::size_t count = 0;
  for_each_part_in(rows, lo, hi, [&](std::size_t begin, std::size_t end) {
    std::memcpy(to + count * element_size, from + (begin - lo) * element_size, (end - begin) * element_size);
    count += end - begin;
  });
  return count;
}

void place_rows(const RowsRead& rows, std::size_t chunk_numel, int ranks, const void* parts, std::size_t stride,
                void* block, std::size_t element_size) {
  const auto* from = static_cast<const unsigned char*>(parts);
  auto* to = static_cast<unsigned char*>(block);
  for (int r = 0; r < ranks; ++r) {
    const std::size_t lo = static_cast<std::size_t>(r) * chunk_numel, hi = lo + chunk_numel;
    const unsigned char* part = from + static_cast<std::size_t>(r) * stride * element_size;
    std::size_t taken = 0;
    for_each_part_in(rows, lo, hi, [&](std::size_t begin, std::size_t end) {
      std::memcpy(to + begin * element_size, part + taken * element_size, (end - begin) * element_size);
      taken += end - begin;
    });
  }
}

RowsGather::RowsGather(RowsRead rows, std::size_t chunk_numel, int rank, int ranks, const void* chunk,
                       Device device, DType dtype, Stream& stream, MemoryTracker& tracker)
    : read(std::move(rows)), chunk_numel(chunk_numel), ranks(ranks), stride(rows_part_numel(read, chunk_numel, ranks)) {
  if (!device.is_cpu()) throw std::logic_error("first rows: the rows are packed and placed by host code");
  packed = Buffer(device, dtype, stride, MemCategory::gathered, stream, tracker);
  parts = Buffer(device, dtype, parts_numel(), MemCategory::gathered, stream, tracker);
  const std::size_t lo = static_cast<std::size_t>(rank) * chunk_numel;
  pack_rows(read, lo, lo + chunk_numel, chunk, packed.data(), dtype_size(dtype));
}

void RowsGather::place(void* block) {
  zt::place_rows(read, chunk_numel, ranks, parts.data(), stride, block, dtype_size(parts.dtype()));
  placed = true;
  packed = Buffer();
  parts = Buffer();
}

}  // namespace zt
