// The per-step metrics a run writes: one JSON object per line in <run_dir>/metrics.jsonl, so
// that plots, dashboards and scripts read them without parsing log lines.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "runtime/config/config.h"

namespace zt {

class MetricsLog {
 public:
  // Appends to path (creating it, never through a symbolic link: O_NOFOLLOW); every record is one
  // write(2), so a crash loses at most one line. Throws zt::UserError naming the file.
  MetricsLog(const std::filesystem::path& path, WriteErrorPolicy on_error);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  // A record that cannot be written whole (a full disk, a file size limit) is cut back off the
  // file, so the file only ever holds whole lines. Then: WriteErrorPolicy::fail throws
  // zt::UserError naming the file and the error; warn logs one warning and counts the loss.
  void write(const nlohmann::json& record);
  // Warns how many records were lost, if any (also done when destroyed).
  void report_losses();

 private:
  std::filesystem::path path_;
  WriteErrorPolicy on_error_;
  int fd_ = -1;
  std::uint64_t lost_ = 0;
  std::optional<std::int64_t> first_lost_step_;
  bool reported_ = false;
};

}  // namespace zt
