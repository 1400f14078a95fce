// A read-only memory map of a whole file (POSIX mmap), unmapped when the object goes away.
//
// Shards can be many gigabytes; mapping them lets the loader touch only the windows it reads
// and leaves caching to the kernel's page cache instead of copying files into our memory.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace zt::data {

class MappedFile {
 public:
  // Maps `path` read-only; throws zt::UserError naming the file when it cannot be opened.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }

 private:
  void unmap() noexcept;

  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace zt::data
