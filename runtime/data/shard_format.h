// The token shard file formats, llm.c's, so that users can bring shards made there:
//
//   header:  256 little-endian int32: [0] magic, [1] version, [2] token count, the rest zero
//   payload: token count little-endian tokens
//
//   gpt2    magic 20240520, version 1, uint16 tokens (vocabularies up to 65,536; GPT-2's BPE)
//   llama3  magic 20240801, version 7, uint32 tokens (larger vocabularies, e.g. Llama 3's 128k)
//
// The file is exactly 1024 + token_bytes * count bytes long.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace zt::data {

inline constexpr std::int32_t kShardMagic = 20240520;  // gpt2
inline constexpr std::int32_t kShardVersion = 1;
inline constexpr std::size_t kShardHeaderInts = 256;
inline constexpr std::size_t kShardHeaderBytes = kShardHeaderInts * sizeof(std::int32_t);  // 1024
inline constexpr std::size_t kTokenBytes = sizeof(std::uint16_t);  // gpt2

enum class ShardFormat { gpt2, llama3 };

struct ShardFormatInfo {
  ShardFormat format;
  std::string_view name;  // as --shard-format takes it
  std::int32_t magic;
  std::int32_t version;
  std::size_t token_bytes;
  std::uint64_t max_vocab;  // ids must fit the token width
};

const ShardFormatInfo& shard_format_info(ShardFormat format);
// "gpt2" or "llama3"; throws zt::UserError naming the known formats on anything else.
ShardFormat parse_shard_format(std::string_view name);

using ShardHeaderBytes = std::array<std::byte, kShardHeaderBytes>;

// The header of a shard holding `token_count` tokens, byte for byte.
ShardHeaderBytes encode_shard_header(std::uint64_t token_count, ShardFormat format = ShardFormat::gpt2);

struct ShardInfo {
  std::uint64_t token_count = 0;
  ShardFormat format = ShardFormat::gpt2;
};

// Checks the header and the file size of a shard whose whole content is `file_bytes`. Throws
// zt::UserError naming `file_name` on a truncated header, an unknown magic number (the message
// names the known formats), a version that does not go with the magic, or a payload shorter or
// longer than the header's count says.
ShardInfo validate_shard(std::string_view file_name, std::span<const std::byte> file_bytes);
// The same checks from the file's first bytes (at least the header's, when the file has them) and
// its size, for readers that do not hold the whole file.
ShardInfo validate_shard_header(std::string_view file_name, std::span<const std::byte> first_bytes,
                                std::uint64_t file_size);

}  // namespace zt::data
