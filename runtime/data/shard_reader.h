// Reads one token shard (see shard_format.h: uint16 or uint32 tokens) with positioned reads
// (pread) into buffers the caller owns. Opening validates the header and the size; every later read checks that the file still has
// that size and the same identity, and that every token it returns is below the vocabulary size.
// A shard truncated or rewritten while a run reads it is therefore one clear error naming the file
// and the byte offset, never a SIGBUS, an out-of-bounds read or a silently wrong token.
//
// No descriptor or mapping is held between reads unless asked (open()/close()): a dataset of
// 70,000 shards needs no more than one open file and no mappings at all.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <vector>

#include "runtime/data/shard_format.h"

namespace zt::data {

class TokenShard {
 public:
  // Throws zt::UserError naming the file when it is missing, not a regular file (a FIFO, a
  // directory) or not a valid shard.
  explicit TokenShard(std::filesystem::path path);
  ~TokenShard();
  TokenShard(TokenShard&& other) noexcept;
  TokenShard& operator=(TokenShard&&) = delete;
  TokenShard(const TokenShard&) = delete;
  TokenShard& operator=(const TokenShard&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::uint64_t size() const { return count_; }  // tokens
  ShardFormat format() const { return format_; }

  // Reads tokens [first, first + out.size()) into out. Throws zt::UserError naming the file and the
  // byte offset when the file changed since it was opened (another size, replaced) or ends early,
  // and naming the file, the offset and the value of a token that is not below vocab_size.
  void read(std::uint64_t first, std::span<std::uint32_t> out, int vocab_size);
  // Every token (for tests and tools; the loader reads windows).
  std::vector<std::uint32_t> read_all(int vocab_size = std::numeric_limits<int>::max());
  std::vector<std::uint32_t> tokens() { return read_all(); }

  // Throws zt::UserError naming the file, the token's index and byte offset, the token and the
  // vocabulary size when a token is >= vocab_size (a shard made for another tokenizer).
  void check_tokens_below(int vocab_size);

  // read() opens the file when needed and keeps it open until close() (the loader closes the
  // shard it leaves, so that at most one is open).
  void close();

 private:
  void open_checked();

  std::filesystem::path path_;
  std::uint64_t count_ = 0;
  ShardFormat format_ = ShardFormat::gpt2;
  std::size_t token_bytes_ = 2;
  std::vector<std::byte> raw_;  // one read's bytes as they lie in the file
  std::uint64_t file_bytes_ = 0;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  int fd_ = -1;
};

}  // namespace zt::data
