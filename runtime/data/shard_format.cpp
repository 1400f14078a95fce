#include "runtime/data/shard_format.h"

#include <bit>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"

namespace zt::data {
namespace {

// Explicit little-endian byte order, so the header is right whatever the host's order.
void store_int32_le(std::byte* out, std::int32_t value) {
  const auto bits = static_cast<std::uint32_t>(value);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xffu);
}

std::int32_t load_int32_le(const std::byte* in) {
  std::uint32_t bits = 0;
  for (int i = 0; i < 4; ++i) bits |= static_cast<std::uint32_t>(in[i]) << (8 * i);
  return static_cast<std::int32_t>(bits);
}

}  // namespace

ShardHeaderBytes encode_shard_header(std::uint64_t token_count) {
  if (token_count > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
    throw std::invalid_argument(
        fmt::format("a shard holds at most {} tokens (int32 count), asked for {}",
                    std::numeric_limits<std::int32_t>::max(), token_count));
  }
  ShardHeaderBytes header{};
  store_int32_le(header.data() + 0, kShardMagic);
  store_int32_le(header.data() + 4, kShardVersion);
  store_int32_le(header.data() + 8, static_cast<std::int32_t>(token_count));
  return header;
}

std::uint64_t validate_shard(std::string_view file_name, std::span<const std::byte> file_bytes) {
  return validate_shard_header(file_name, file_bytes, file_bytes.size());
}

std::uint64_t validate_shard_header(std::string_view file_name, std::span<const std::byte> file_bytes,
                                    std::uint64_t file_size) {
  if (file_size < kShardHeaderBytes || file_bytes.size() < kShardHeaderBytes) {
    throw UserError(fmt::format(
        "{}: truncated header: a token shard starts with a {}-byte header (256 int32), but the file has {} bytes",
        file_name, kShardHeaderBytes, file_size));
  }
  const std::int32_t magic = load_int32_le(file_bytes.data());
  if (magic != kShardMagic) {
    throw UserError(fmt::format("{}: not a token shard: magic number {}, expected {} (llm.c token shard format)",
                                file_name, magic, kShardMagic));
  }
  const std::int32_t version = load_int32_le(file_bytes.data() + 4);
  if (version != kShardVersion) {
    throw UserError(fmt::format("{}: unsupported token shard version {}, expected {} (uint16 tokens)", file_name,
                                version, kShardVersion));
  }
  const std::int32_t count = load_int32_le(file_bytes.data() + 8);
  if (count < 0) throw UserError(fmt::format("{}: negative token count {} in the header", file_name, count));
  const std::uint64_t expected = kShardHeaderBytes + kTokenBytes * static_cast<std::uint64_t>(count);
  if (file_size < expected) {
    throw UserError(fmt::format(
        "{}: truncated token payload: the header says {} tokens, so expected {} bytes ({} header + {} x {}), "
        "found {} bytes",
        file_name, count, expected, kShardHeaderBytes, count, kTokenBytes, file_size));
  }
  if (file_size > expected) {
    throw UserError(fmt::format(
        "{}: {} trailing bytes: the header says {} tokens, so expected {} bytes, found {} bytes", file_name,
        file_size - expected, count, expected, file_size));
  }
  return static_cast<std::uint64_t>(count);
}

}  // namespace zt::data
