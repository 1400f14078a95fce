#include "runtime/checkpoint/checkpoint_file_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/error.h"

namespace zt::checkpoint {
namespace {

[[noreturn]] void throw_io_error(std::string_view what, const std::filesystem::path& path) {
  // The machine's answer about a path the user named (a full disk, a read-only directory).
  throw UserError(fmt::format("{} {}: {}", what, path.string(), std::strerror(errno)));
}

}  // namespace

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

int FileDescriptor::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

std::uint32_t crc32_of(std::span<const std::byte> bytes, std::uint32_t crc) {
  // zlib takes uInt lengths: feed it in pieces that fit.
  constexpr std::size_t kPiece = 1u << 30;
  uLong value = crc;
  for (std::size_t done = 0; done < bytes.size(); done += kPiece) {
    const std::size_t n = std::min(kPiece, bytes.size() - done);
    value = ::crc32(value, reinterpret_cast<const Bytef*>(bytes.data() + done), static_cast<uInt>(n));
  }
  return static_cast<std::uint32_t>(value);
}

SyncedFileWriter::SyncedFileWriter(std::filesystem::path path)
    : path_(std::move(path)), file_(::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) {
  // O_EXCL: every checkpoint file is new in a directory this save created; anything already at the
  // name (a planted link) is refused rather than followed or truncated.
  if (file_.get() < 0) throw_io_error("cannot create", path_);
}

void SyncedFileWriter::append(std::span<const std::byte> bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(file_.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_io_error("cannot write", path_);
    written += static_cast<std::size_t>(n);
  }
  crc_ = crc32_of(bytes, crc_);
}

std::uint32_t SyncedFileWriter::finish() {
  if (::fsync(file_.get()) != 0) throw_io_error("cannot fsync", path_);
  // close() can report a deferred write error: check it rather than leave it to the destructor.
  if (::close(file_.release()) != 0) throw_io_error("cannot close", path_);
  return crc_;
}

std::uint32_t write_file_synced(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  SyncedFileWriter file(path);
  file.append(bytes);
  return file.finish();
}

std::uint32_t write_file_synced(const std::filesystem::path& path, std::string_view text) {
  return write_file_synced(path, std::as_bytes(std::span(text.data(), text.size())));
}

void sync_directory(const std::filesystem::path& dir) {
  FileDescriptor file(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (file.get() < 0) throw_io_error("cannot open directory", dir);
  if (::fsync(file.get()) != 0) throw_io_error("cannot fsync directory", dir);
}

FileDescriptor open_for_reading(const std::filesystem::path& path) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) throw_io_error("cannot open", path);
  return file;
}

void read_exactly(const FileDescriptor& file, const std::filesystem::path& path, std::uint64_t offset,
                  std::span<std::byte> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(file.get(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_io_error("cannot read", path);
    if (n == 0)
      throw std::runtime_error(fmt::format("{}: file ends at byte {}, expected {} bytes from offset {}", path.string(),
                                           offset + done, out.size(), offset));
    done += static_cast<std::size_t>(n);
  }
}

std::uint32_t crc32_of_file(const FileDescriptor& file, const std::filesystem::path& path, std::uint64_t size) {
  std::vector<std::byte> piece(std::min<std::uint64_t>(size, 4u << 20));
  std::uint32_t crc = 0;
  for (std::uint64_t done = 0; done < size;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), size - done));
    read_exactly(file, path, done, std::span(piece.data(), n));
    crc = crc32_of(std::span(piece.data(), n), crc);
    done += n;
  }
  return crc;
}

}  // namespace zt::checkpoint
