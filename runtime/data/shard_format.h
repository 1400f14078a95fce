// The token shard file format, compatible with llm.c's data scripts so that users can bring
// shards made there:
//
//   header:  256 little-endian int32: [0] magic 20240520, [1] version 1, [2] token count,
//            the rest zero
//   payload: token count little-endian uint16 tokens
//
// The file is exactly 1024 + 2 * count bytes long.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace zt::data {

inline constexpr std::int32_t kShardMagic = 20240520;
inline constexpr std::int32_t kShardVersion = 1;
inline constexpr std::size_t kShardHeaderInts = 256;
inline constexpr std::size_t kShardHeaderBytes = kShardHeaderInts * sizeof(std::int32_t);  // 1024
inline constexpr std::size_t kTokenBytes = sizeof(std::uint16_t);

using ShardHeaderBytes = std::array<std::byte, kShardHeaderBytes>;

// The header of a shard holding `token_count` tokens, byte for byte.
ShardHeaderBytes encode_shard_header(std::uint64_t token_count);

// Checks the header and the file size of a shard whose whole content is `file_bytes` and returns
// its token count. Throws zt::UserError naming `file_name` on a truncated header, a wrong magic
// number, an unsupported version, or a payload shorter or longer than the header's count says.
std::uint64_t validate_shard(std::string_view file_name, std::span<const std::byte> file_bytes);
// The same checks from the file's first bytes (at least the header's, when the file has them) and
// its size, for readers that do not hold the whole file.
std::uint64_t validate_shard_header(std::string_view file_name, std::span<const std::byte> first_bytes,
                                    std::uint64_t file_size);

}  // namespace zt::data
