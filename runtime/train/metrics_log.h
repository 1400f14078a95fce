// The per-step metrics a run writes: one JSON object per line in <run_dir>/metrics.jsonl, so
// that plots, dashboards and scripts read them without parsing log lines.
#pragma once

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace zt {

class MetricsLog {
 public:
  // Appends to path (creating it); every record is flushed, so a crash loses at most one line.
  explicit MetricsLog(const std::filesystem::path& path);
  void write(const nlohmann::json& record);

 private:
  std::ofstream out_;
};

}  // namespace zt
