#include "runtime/train/checkpoint_dir_check.h"

#include <fcntl.h>
#include <stdlib.h>
#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/memory.h"

namespace zt {

std::optional<std::string> checkpoint_dir_problem(const std::filesystem::path& dir, int) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return fmt::format("cannot create {}: {}", dir.string(), error.message());
  // A fresh, unique name (mkstemp: O_CREAT|O_EXCL): a file or link planted at a predictable name
  // is never opened, truncated or written through, and ranks sharing the directory never collide.
  std::string probe = (dir / ".write_probe.XXXXXX").string();
  const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot create a file in {}: {}", dir.string(), std::strerror(errno));
  const char byte = 0;
  std::optional<std::string> problem;
  if (::write(fd, &byte, 1) != 1 || ::fsync(fd) != 0)
    problem = fmt::format("cannot write into {}: {}", dir.string(), std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return problem;
}

std::optional<std::string> checkpoint_space_warning(const std::filesystem::path& dir, std::uint64_t checkpoint_bytes) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return std::nullopt;  // the save will say what is wrong
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes >= checkpoint_bytes) return std::nullopt;
  return fmt::format("{} has {} free but a checkpoint takes about {}: saving will fail with 'No space left on "
                     "device' unless space is freed",
                     dir.string(), format_bytes(static_cast<std::int64_t>(free_bytes)),
                     format_bytes(static_cast<std::int64_t>(checkpoint_bytes)));
}

}  // namespace zt
