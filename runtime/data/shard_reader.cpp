#include "runtime/data/shard_reader.h"

#include <bit>

#include <fmt/format.h>

#include "runtime/core/error.h"

namespace zt::data {

// The payload is read in place as uint16/uint32, which is the file's little-endian order only on
// a little-endian host (every platform zerotrain targets).
static_assert(std::endian::native == std::endian::little, "token shards are mapped as little-endian integers");

TokenShard::TokenShard(std::filesystem::path path) : path_(std::move(path)), file_(path_) {
  const ShardInfo info = validate_shard(path_.string(), file_.bytes());
  // mmap returns page-aligned memory and the header is 1024 bytes, so the payload is 4-aligned.
  payload_ = file_.bytes().data() + kShardHeaderBytes;
  token_bytes_ = shard_format_info(info.format).token_bytes;
  count_ = info.token_count;
  format_ = info.format;
}

std::vector<std::uint32_t> TokenShard::tokens() const {
  std::vector<std::uint32_t> all(count_);
  for (std::size_t i = 0; i < count_; ++i) all[i] = token(i);
  return all;
}

void TokenShard::check_tokens_below(int vocab_size) const {
  for (std::size_t i = 0; i < count_; ++i) {
    const std::uint32_t t = token(i);
    if (t >= static_cast<std::uint32_t>(vocab_size)) {
      throw UserError(fmt::format(
          "{}: token {} at index {} (byte offset {}) is not below the model's vocabulary size {}; "
          "was this shard made with another tokenizer?",
          path_.string(), t, i, kShardHeaderBytes + token_bytes_ * i, vocab_size));
    }
  }
}

}  // namespace zt::data
