#include "runtime/train/metrics_log.h"

#include <fmt/format.h>

#include "core/error.h"

namespace zt {

MetricsLog::MetricsLog(const std::filesystem::path& path) : out_(path, std::ios::app) {
  if (!out_) throw UserError(fmt::format("cannot open the metrics file {} for writing", path.string()));
}

void MetricsLog::write(const nlohmann::json& record) {
  out_ << record.dump() << '\n';
  out_.flush();
}

}  // namespace zt
