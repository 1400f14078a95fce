// Writing files without being redirected by what else is in the directory.
//
// A path the user named may already hold a symbolic link planted by someone else (a shared
// run_dir, /tmp); opening it with O_CREAT|O_TRUNC would truncate whatever it points at. Every file
// zerotrain writes is either created fresh under a unique name (O_EXCL) and renamed into place,
// or opened with O_NOFOLLOW, so a link is refused, never followed.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace zt {

// open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode). Throws zt::UserError naming the path: "is a
// symbolic link; refusing to write through it" (ELOOP), or the system's reason.
int open_no_follow(const std::filesystem::path& path, int flags, mode_t mode = 0644);

// Writes all of `bytes` to fd (retrying short writes and EINTR). Throws zt::UserError naming path
// and the system's reason (e.g. "No space left on device").
void write_all(int fd, const std::filesystem::path& path, std::span<const std::byte> bytes);

// A file written under a unique temporary name beside `target` (created with O_EXCL, so nothing
// that was there is followed or truncated) and renamed over `target` by commit(): readers see the
// old file or the complete new one, never a part. Destroyed without commit() (an error on the
// way), it removes the temporary file and leaves `target` as it was. A target that is neither a
// regular file nor a link (a device such as /dev/null, a named pipe, a directory) is refused with a
// zt::UserError naming it, at construction and again before the rename: it is never replaced.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::span<const std::byte> bytes);
  void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }
  // fsync, close, rename over the target, fsync the directory. Throws zt::UserError naming the file.
  void commit();

  const std::filesystem::path& target() const { return target_; }

 private:
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  int fd_ = -1;
};

// A fresh directory made under a unique name (mkdtemp: nothing planted there is reused),
// `name_prefix` followed by six random characters, e.g. "out/.prepare-data." -> out/.prepare-data.Ab12Cd.
// Removed with everything in it when the object goes, unless keep() was called (after it was
// renamed into place, say). Throws zt::UserError naming the parent directory and the reason.
class TemporaryDirectory {
 public:
  explicit TemporaryDirectory(const std::filesystem::path& name_prefix);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }
  void keep() { path_.clear(); }
  // The mode mkdir would have given it (0777 less the umask) instead of mkdtemp's 0700: for a
  // directory that is renamed into place as the command's output.
  void set_default_permissions();

 private:
  std::filesystem::path path_;
};

// AtomicFile in one call.
void write_file_atomically(const std::filesystem::path& target, std::string_view text);

// The whole of a small file that someone else may have put at `path` (a config, a manifest, a
// dataset summary), read without ever blocking on it: opened non-blocking and taken only when it
// is a regular file, so a named pipe or a device there is refused instead of waited on forever.
// Nothing when it cannot be read; `why` then says why: "a named pipe, not a regular file", or
// the system's reason ("No such file or directory").
std::optional<std::string> read_regular_file(const std::filesystem::path& path, std::string& why);

}  // namespace zt
