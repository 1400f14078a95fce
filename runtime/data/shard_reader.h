// Reads one token shard (see shard_format.h; uint16 or uint32 tokens) through a memory map:
// opening validates the header and the size, token(i) reads the mapped file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include <vector>

#include "runtime/data/mapped_file.h"
#include "runtime/data/shard_format.h"

namespace zt::data {

class TokenShard {
 public:
  // Throws zt::UserError naming the file when it is missing or not a valid shard.
  explicit TokenShard(std::filesystem::path path);

  const std::filesystem::path& path() const { return path_; }
  ShardFormat format() const { return format_; }
  std::uint64_t size() const { return count_; }
  std::uint32_t token(std::size_t i) const {
    return token_bytes_ == 2 ? reinterpret_cast<const std::uint16_t*>(payload_)[i]
                             : reinterpret_cast<const std::uint32_t*>(payload_)[i];
  }
  // Every token, copied (for tests and tools; the loader reads token(i)).
  std::vector<std::uint32_t> tokens() const;

  // Throws zt::UserError naming the file, the token's index and byte offset, the token and the
  // vocabulary size when a token is >= vocab_size (a shard made for another tokenizer).
  void check_tokens_below(int vocab_size) const;

 private:
  std::filesystem::path path_;
  MappedFile file_;
  const std::byte* payload_ = nullptr;  // little-endian tokens, aligned to their width
  std::size_t token_bytes_ = 2;
  std::uint64_t count_ = 0;
  ShardFormat format_ = ShardFormat::gpt2;
};

}  // namespace zt::data
