#include "runtime/data/shard_reader.h"

#include <bit>

#include <fmt/format.h>

#include "core/error.h"
#include "runtime/data/shard_format.h"

namespace zt::data {

// The payload is read in place as uint16, which is the file's little-endian order only on a
// little-endian host (every platform zerotrain targets).
static_assert(std::endian::native == std::endian::little, "token shards are mapped as little-endian uint16");

TokenShard::TokenShard(std::filesystem::path path) : path_(std::move(path)), file_(path_) {
  const std::uint64_t count = validate_shard(path_.string(), file_.bytes());
  // mmap returns page-aligned memory and the header is 1024 bytes, so the payload is 2-aligned.
  const auto* first = reinterpret_cast<const std::uint16_t*>(file_.bytes().data() + kShardHeaderBytes);
  tokens_ = {first, static_cast<std::size_t>(count)};
}

void TokenShard::check_tokens_below(int vocab_size) const {
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i] >= vocab_size) {
      throw UserError(fmt::format(
          "{}: token {} at index {} (byte offset {}) is not below the model's vocabulary size {}; "
          "was this shard made with another tokenizer?",
          path_.string(), tokens_[i], i, kShardHeaderBytes + kTokenBytes * i, vocab_size));
    }
  }
}

}  // namespace zt::data
