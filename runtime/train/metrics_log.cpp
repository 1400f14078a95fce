#include "runtime/train/metrics_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "core/safe_file.h"

namespace zt {

MetricsLog::MetricsLog(const std::filesystem::path& path, WriteErrorPolicy on_error)
    : path_(path), on_error_(on_error), fd_(open_no_follow(path, O_WRONLY | O_CREAT | O_APPEND)) {}

MetricsLog::~MetricsLog() {
  report_losses();
  if (fd_ >= 0) ::close(fd_);
}

void MetricsLog::write(const nlohmann::json& record) {
  const std::string line = record.dump() + '\n';
  struct stat before {};
  const bool sized = ::fstat(fd_, &before) == 0;
  std::size_t written = 0;
  int error = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (written == line.size()) return;
  // Never leave half a line: readers (plot, scripts) would take it for a corrupt file.
  if (written > 0 && sized && ::ftruncate(fd_, before.st_size) != 0) {
    // Nothing more to do: the reader skips a line cut short (and says so).
  }
  const std::int64_t step = record.contains("step") && record["step"].is_number_integer() ? record["step"].get<std::int64_t>() : -1;
  const std::string what = fmt::format("cannot write the metrics record of step {} to {}: {}", step, path_.string(),
                                       std::strerror(error));
  if (on_error_ == WriteErrorPolicy::fail)
    throw UserError(fmt::format("{} (logging.on_write_error: fail stops the job)", what));
  if (lost_ == 0) {
    log::warn("{}; training goes on and later records are written when there is room again (logging.on_write_error: "
              "warn; `fail` stops the job instead)",
              what);
    first_lost_step_ = step;
  }
  ++lost_;
}

void MetricsLog::report_losses() {
  if (lost_ == 0 || reported_) return;
  reported_ = true;
  log::warn("{} metrics record(s) could not be written to {} (the first of step {}): the file lacks them", lost_,
            path_.string(), first_lost_step_.value_or(-1));
}

}  // namespace zt
