#include "core/safe_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "core/error.h"

namespace zt {
namespace {

[[noreturn]] void throw_errno(std::string_view doing, const std::filesystem::path& path, int error) {
  throw UserError(fmt::format("{}: {}: {}", path.string(), doing, std::strerror(error)));
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// A rename replaces whatever the name holds: a device node (/dev/null, as root), a pipe or a
// directory must never be replaced by a file, so anything but a regular file or a link is refused.
// A link is replaced itself (what it points at is untouched), unless it stands for such a thing:
// /dev/stdout is a link to the terminal or a pipe, and a user naming it means that, not a file.
void refuse_unless_replaceable(const std::filesystem::path& target) {
  struct stat existing {};
  if (::lstat(target.c_str(), &existing) != 0) return;  // nothing there (or unreadable: rename will say)
  if (S_ISREG(existing.st_mode)) return;
  if (S_ISLNK(existing.st_mode)) {
    struct stat pointed {};
    if (::stat(target.c_str(), &pointed) != 0 || S_ISREG(pointed.st_mode)) return;  // dangling, or to a file
    throw UserError(fmt::format("{}: is a symbolic link to {}; zerotrain writes only regular files here (name a "
                                "file path)",
                                target.string(), kind_of(pointed.st_mode)));
  }
  throw UserError(fmt::format("{}: is {}; zerotrain writes only regular files here (name a file path)",
                              target.string(), kind_of(existing.st_mode)));
}

}  // namespace

int open_no_follow(const std::filesystem::path& path, int flags, mode_t mode) {
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd >= 0) return fd;
  if (errno == ELOOP)
    throw UserError(fmt::format("{}: is a symbolic link; refusing to write through it (remove it, or name another "
                                "path)",
                                path.string()));
  throw_errno("cannot open for writing", path, errno);
}

void write_all(int fd, const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot write", path, errno);
    written += static_cast<std::size_t>(n);
  }
}

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  refuse_unless_replaceable(target_);
  const std::filesystem::path dir = target_.has_parent_path() ? target_.parent_path() : ".";
  // mkstemp creates with O_EXCL under a fresh name: a planted file or link there is never opened.
  std::string name = (dir / ("." + target_.filename().string() + ".tmp-XXXXXX")).string();
  fd_ = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) throw_errno("cannot create a temporary file beside it", target_, errno);
  temporary_ = name;
  ::fchmod(fd_, 0644);  // mkstemp's 0600 is stricter than the files zerotrain writes otherwise
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void AtomicFile::write(std::span<const std::byte> bytes) { write_all(fd_, target_, bytes); }

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) throw_errno("cannot write (fsync)", target_, errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw_errno("cannot write (close)", target_, errno);
  refuse_unless_replaceable(target_);  // again: something may have appeared there meanwhile
  // rename replaces a link at target_ itself, never the file it points at.
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0) throw_errno("cannot replace", target_, errno);
  temporary_.clear();
  const std::filesystem::path dir = target_.has_parent_path() ? target_.parent_path() : ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);  // best effort: the rename is already visible
    ::close(dir_fd);
  }
}

TemporaryDirectory::TemporaryDirectory(const std::filesystem::path& name_prefix) {
  std::string name = name_prefix.string() + "XXXXXX";
  if (::mkdtemp(name.data()) == nullptr) {
    const std::filesystem::path parent = name_prefix.has_parent_path() ? name_prefix.parent_path() : ".";
    throw_errno("cannot create a temporary directory in it", parent, errno);
  }
  path_ = name;
}

void TemporaryDirectory::set_default_permissions() {
  const mode_t mask = ::umask(0);  // reading the umask means setting it: put it straight back
  ::umask(mask);
  if (::chmod(path_.c_str(), 0777 & ~mask) != 0) throw_errno("cannot set its permissions", path_, errno);
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;  // a leftover temporary directory is not worth failing for
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

std::optional<std::string> read_regular_file(const std::filesystem::path& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    why = std::strerror(errno);
    ::close(fd);
    return std::nullopt;
  }
  if (!S_ISREG(info.st_mode)) {
    why = fmt::format("{}, not a regular file", kind_of(info.st_mode));
    ::close(fd);
    return std::nullopt;
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

void write_file_atomically(const std::filesystem::path& target, std::string_view text) {
  AtomicFile file(target);
  file.write(text);
  file.commit();
}

}  // namespace zt
