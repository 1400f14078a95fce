// Reads one token shard (see shard_format.h) through a memory map: opening validates the header
// and the size, tokens() is a view into the mapped file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "runtime/data/mapped_file.h"

namespace zt::data {

class TokenShard {
 public:
  // Throws zt::UserError naming the file when it is missing or not a valid shard.
  explicit TokenShard(std::filesystem::path path);

  const std::filesystem::path& path() const { return path_; }
  std::span<const std::uint16_t> tokens() const { return tokens_; }
  std::uint64_t size() const { return tokens_.size(); }

  // Throws zt::UserError naming the file, the token's index and byte offset, the token and the
  // vocabulary size when a token is >= vocab_size (a shard made for another tokenizer).
  void check_tokens_below(int vocab_size) const;

 private:
  std::filesystem::path path_;
  MappedFile file_;
  std::span<const std::uint16_t> tokens_;
};

}  // namespace zt::data
