#include "runtime/plot/metrics_series.h"

#include <fmt/format.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace zt::plot {
namespace {

bool has_number(const nlohmann::json& record, const char* key) {
  auto it = record.find(key);
  return it != record.end() && it->is_number();
}

}  // namespace

MetricsSeries read_metrics(const std::filesystem::path& metrics_file) {
  std::ifstream in(metrics_file);
  if (!in)
    throw UserError(fmt::format("no metrics to plot: cannot open {} (is this the run_dir of a training run?)",
                                metrics_file.string()));
  MetricsSeries series;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !has_number(record, "step")) {
      ++series.unreadable_lines;
      continue;
    }
    const auto step = record["step"].get<std::int64_t>();
    if (has_number(record, "loss") && has_number(record, "tokens_per_s"))
      series.train[step] = {record["loss"].get<double>(), record["tokens_per_s"].get<double>()};
    if (has_number(record, "val_loss")) series.val_loss[step] = record["val_loss"].get<double>();
  }
  if (series.train.empty())
    throw UserError(fmt::format("no metrics to plot: {} holds no training step (lines with step, loss and "
                                "tokens_per_s)",
                                metrics_file.string()));
  return series;
}

}  // namespace zt::plot
