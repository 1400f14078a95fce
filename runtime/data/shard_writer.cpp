#include "runtime/data/shard_writer.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "runtime/data/shard_format.h"

namespace zt::data {
namespace {

static_assert(std::endian::native == std::endian::little, "tokens are written in the host's (little-endian) order");

void check_stream(const std::ofstream& out, const std::filesystem::path& path, std::string_view doing) {
  if (!out) throw UserError(fmt::format("{}: cannot {}: {}", path.string(), doing, std::strerror(errno)));
}

void write_header(std::ofstream& out, const std::filesystem::path& path, std::uint64_t token_count,
                  ShardFormat format) {
  const ShardHeaderBytes header = encode_shard_header(token_count, format);
  out.write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size()));
  check_stream(out, path, "write the shard header");
}

void write_tokens(std::ofstream& out, const std::filesystem::path& path, std::span<const std::uint16_t> tokens,
                  ShardFormat format) {
  if (format == ShardFormat::gpt2) {
    out.write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size_bytes()));
  } else {  // llama3: the same ids, 4 bytes each
    const std::vector<std::uint32_t> wide(tokens.begin(), tokens.end());
    out.write(reinterpret_cast<const char*>(wide.data()), static_cast<std::streamsize>(wide.size() * sizeof(std::uint32_t)));
  }
  check_stream(out, path, "write tokens");
}

// The most tokens one file may hold: the header's count is an int32.
constexpr std::uint64_t kMaxShardTokens = 0x7fffffff;

}  // namespace

std::string shard_file_name(const std::string& prefix, std::size_t index) {
  return fmt::format("{}_{:06d}.bin", prefix, index);
}

void write_token_shard(const std::filesystem::path& path, std::span<const std::uint16_t> tokens, ShardFormat format) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  check_stream(out, path, "create the file");
  write_header(out, path, tokens.size(), format);
  write_tokens(out, path, tokens, format);
  out.close();
  check_stream(out, path, "close the file");
}

ShardSequenceWriter::ShardSequenceWriter(std::filesystem::path directory, std::string prefix,
                                         std::uint64_t shard_tokens, ShardFormat format)
    : directory_(std::move(directory)), prefix_(std::move(prefix)), shard_tokens_(shard_tokens), format_(format) {
  if (shard_tokens_ == 0 || shard_tokens_ > kMaxShardTokens) {
    throw UserError(fmt::format("shard size must be between 1 and {} tokens, got {}", kMaxShardTokens, shard_tokens_));
  }
}

ShardSequenceWriter::~ShardSequenceWriter() {
  try {
    close_current_file();
  } catch (...) {  // a destructor must not throw; finish() is where write errors are reported
  }
}

void ShardSequenceWriter::append(std::span<const std::uint16_t> tokens) {
  while (!tokens.empty()) {
    if (!out_.is_open()) open_next_file();
    const std::uint64_t room = shard_tokens_ - tokens_in_file_;
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(room, tokens.size()));
    write_tokens(out_, files_.back(), tokens.first(take), format_);
    tokens_in_file_ += take;
    total_tokens_ += take;
    tokens = tokens.subspan(take);
    if (tokens_in_file_ == shard_tokens_) close_current_file();
  }
}

void ShardSequenceWriter::finish() { close_current_file(); }

void ShardSequenceWriter::open_next_file() {
  files_.push_back(directory_ / shard_file_name(prefix_, files_.size()));
  out_.open(files_.back(), std::ios::binary | std::ios::trunc);
  check_stream(out_, files_.back(), "create the file");
  write_header(out_, files_.back(), 0, format_);  // placeholder; the count is known when the file closes
  tokens_in_file_ = 0;
}

void ShardSequenceWriter::close_current_file() {
  if (!out_.is_open()) return;
  out_.seekp(0);
  write_header(out_, files_.back(), tokens_in_file_, format_);
  out_.close();
  check_stream(out_, files_.back(), "close the file");
}

}  // namespace zt::data
