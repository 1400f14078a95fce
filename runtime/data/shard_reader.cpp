#include "runtime/data/shard_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "runtime/data/shard_format.h"

namespace zt::data {
namespace {

// The payload is read as uint16/uint32 as it lies in the file, which is the file's little-endian
// order only on a little-endian host (every platform zerotrain targets).
static_assert(std::endian::native == std::endian::little, "token shards are read as little-endian integers");

// O_NONBLOCK: opening a FIFO that matched a data glob must not wait for a writer (forever). It has
// no effect on reads of regular files, the only kind accepted.
int open_regular(const std::filesystem::path& path, struct stat& info) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw UserError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    throw UserError(fmt::format("{}: cannot stat: {}", path.string(), std::strerror(error)));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw UserError(fmt::format("{}: not a regular file; token shards must be regular files", path.string()));
  }
  return fd;
}

// Reads out.size() bytes at offset; returns how many there were before the end of the file.
std::size_t pread_fully(int fd, const std::filesystem::path& path, std::uint64_t offset, std::span<std::byte> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw UserError(fmt::format("{}: cannot read {} bytes at byte offset {}: {}", path.string(), out.size(), offset,
                                  std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

}  // namespace

TokenShard::TokenShard(std::filesystem::path path) : path_(std::move(path)) {
  struct stat info {};
  fd_ = open_regular(path_, info);
  file_bytes_ = static_cast<std::uint64_t>(info.st_size);
  device_ = info.st_dev;
  inode_ = info.st_ino;
  std::array<std::byte, kShardHeaderBytes> header{};
  const std::size_t got = pread_fully(fd_, path_, 0, header);
  try {
    const ShardInfo shard = validate_shard_header(path_.string(), std::span(header.data(), got), file_bytes_);
    count_ = shard.token_count;
    format_ = shard.format;
    token_bytes_ = shard_format_info(shard.format).token_bytes;
  } catch (...) {
    close();
    throw;
  }
  close();
}

TokenShard::~TokenShard() { close(); }

TokenShard::TokenShard(TokenShard&& other) noexcept
    : path_(std::move(other.path_)),
      count_(other.count_),
      format_(other.format_),
      token_bytes_(other.token_bytes_),
      raw_(std::move(other.raw_)),
      file_bytes_(other.file_bytes_),
      device_(other.device_),
      inode_(other.inode_),
      fd_(std::exchange(other.fd_, -1)) {}

void TokenShard::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TokenShard::open_checked() {
  struct stat info {};
  fd_ = open_regular(path_, info);
  if (info.st_dev != device_ || info.st_ino != inode_ || static_cast<std::uint64_t>(info.st_size) != file_bytes_) {
    close();
    throw UserError(fmt::format("{}: the file changed while training read it ({} bytes at start-up, {} now{}); token "
                                "shards must not be rewritten during a run",
                                path_.string(), file_bytes_, info.st_size,
                                info.st_ino != inode_ || info.st_dev != device_ ? ", and it is another file" : ""));
  }
}

void TokenShard::read(std::uint64_t first, std::span<std::uint32_t> out, int vocab_size) {
  if (first > count_ || out.size() > count_ - first)
    throw std::out_of_range(fmt::format("{}: tokens [{}, {}) of {}", path_.string(), first, first + out.size(), count_));
  if (fd_ < 0) open_checked();
  const std::uint64_t offset = kShardHeaderBytes + token_bytes_ * first;
  raw_.resize(out.size() * token_bytes_);
  const std::size_t got = pread_fully(fd_, path_, offset, raw_);
  if (got != raw_.size()) {
    struct stat info {};
    const long long now = ::fstat(fd_, &info) == 0 ? static_cast<long long>(info.st_size) : -1;
    throw UserError(fmt::format("{}: the file ends at byte {}, inside the {} bytes read at byte offset {} ({} bytes at "
                                "start-up, {} now); was it truncated or rewritten during the run?",
                                path_.string(), offset + got, raw_.size(), offset, file_bytes_, now));
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (token_bytes_ == 2) {
      std::uint16_t token = 0;
      std::memcpy(&token, raw_.data() + 2 * i, 2);
      out[i] = token;
    } else {
      std::memcpy(&out[i], raw_.data() + 4 * i, 4);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] >= static_cast<std::uint32_t>(vocab_size)) {
      throw UserError(fmt::format(
          "{}: token {} at index {} (byte offset {}) is not below the model's vocabulary size {}; "
          "was this shard made with another tokenizer, or changed during the run?",
          path_.string(), out[i], first + i, offset + token_bytes_ * i, vocab_size));
    }
  }
}

std::vector<std::uint32_t> TokenShard::read_all(int vocab_size) {
  std::vector<std::uint32_t> tokens(count_);
  read(0, tokens, vocab_size);
  close();
  return tokens;
}

void TokenShard::check_tokens_below(int vocab_size) {
  constexpr std::uint64_t kPiece = 1u << 19;  // tokens per read: 1 MiB
  std::vector<std::uint32_t> piece(std::min(kPiece, count_));
  for (std::uint64_t first = 0; first < count_; first += kPiece) {
    const std::uint64_t n = std::min(kPiece, count_ - first);
    read(first, std::span(piece.data(), n), vocab_size);
  }
  close();
}

}  // namespace zt::data
