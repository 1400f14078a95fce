// Plain POSIX file I/O for checkpoints: an owned file descriptor, whole-file writes that reach
// the disk (fsync) before a checkpoint is declared complete, positioned reads, and CRC32 (zlib).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

namespace zt::checkpoint {

// Owns one open file descriptor; closes it when destroyed.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  int get() const { return fd_; }
  int release();

 private:
  int fd_ = -1;
};

// CRC32 (zlib's polynomial) of `bytes`, continuing from `crc` (0 to start).
std::uint32_t crc32_of(std::span<const std::byte> bytes, std::uint32_t crc = 0);

// A file written front to back, then fsynced and closed by finish(); the CRC32 of what was written
// is kept along the way. Destroyed without finish() (an exception), it is closed as it is.
class SyncedFileWriter {
 public:
  explicit SyncedFileWriter(std::filesystem::path path);  // creates; fails if anything is at path (O_EXCL)
  void append(std::span<const std::byte> bytes);
  std::uint32_t finish();  // returns the CRC32 of the whole file

 private:
  std::filesystem::path path_;
  FileDescriptor file_;
  std::uint32_t crc_ = 0;
};

// Creates `path` (which must not exist: O_EXCL), writes `bytes`, fsyncs and closes it. Returns the CRC32 of the
// bytes. Throws std::runtime_error naming the file and errno's text on any failure.
std::uint32_t write_file_synced(const std::filesystem::path& path, std::span<const std::byte> bytes);
std::uint32_t write_file_synced(const std::filesystem::path& path, std::string_view text);

// fsyncs a directory, so that the entries created or renamed in it are durable.
void sync_directory(const std::filesystem::path& dir);

// Opens `path` for reading; throws std::runtime_error naming it when that fails.
FileDescriptor open_for_reading(const std::filesystem::path& path);
// Reads exactly out.size() bytes at `offset`; throws naming `path` on a short read.
void read_exactly(const FileDescriptor& file, const std::filesystem::path& path, std::uint64_t offset,
                  std::span<std::byte> out);
// CRC32 of the whole file, read in pieces.
std::uint32_t crc32_of_file(const FileDescriptor& file, const std::filesystem::path& path, std::uint64_t size);

}  // namespace zt::checkpoint
