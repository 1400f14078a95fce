// Writes token shards (see shard_format.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "runtime/data/shard_format.h"

namespace zt::data {

// Writes one whole shard. Throws zt::UserError naming the file when it cannot be written.
void write_token_shard(const std::filesystem::path& path, std::span<const std::uint16_t> tokens,
                       ShardFormat format = ShardFormat::gpt2);

// Streams tokens into numbered shards DIR/PREFIX_000000.bin, DIR/PREFIX_000001.bin, ..., starting a
// new file every `shard_tokens` tokens, without holding a whole shard in memory: each file gets a
// placeholder header that is rewritten with the real count when the file is full or finished.
class ShardSequenceWriter {
 public:
  ShardSequenceWriter(std::filesystem::path directory, std::string prefix, std::uint64_t shard_tokens,
                      ShardFormat format = ShardFormat::gpt2);
  ~ShardSequenceWriter();  // closes an unfinished file quietly; call finish() to see errors
  ShardSequenceWriter(const ShardSequenceWriter&) = delete;
  ShardSequenceWriter& operator=(const ShardSequenceWriter&) = delete;

  void append(std::span<const std::uint16_t> tokens);
  // Completes the last file. Writes nothing if no token was appended.
  void finish();

  const std::vector<std::filesystem::path>& files() const { return files_; }
  std::uint64_t tokens_written() const { return total_tokens_; }

 private:
  void open_next_file();
  void close_current_file();

  std::filesystem::path directory_;
  std::string prefix_;
  std::uint64_t shard_tokens_;
  ShardFormat format_;
  std::ofstream out_;
  std::uint64_t tokens_in_file_ = 0;
  std::uint64_t total_tokens_ = 0;
  std::vector<std::filesystem::path> files_;
};

// "train_000003.bin": the name of shard `index` of a sequence.
std::string shard_file_name(const std::string& prefix, std::size_t index);

}  // namespace zt::data
