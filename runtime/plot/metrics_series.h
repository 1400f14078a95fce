// The curves of a run, read from its <run_dir>/metrics.jsonl: training loss and throughput per
// step, and validation loss at each evaluation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>

namespace zt::plot {

struct TrainPoint {
  double loss = 0.0;
  double tokens_per_s = 0.0;
};

struct MetricsSeries {
  // By step. A resumed run appends steps it already logged before its checkpoint; the later
  // record of a step wins, so the curves show the run that carried on.
  std::map<std::int64_t, TrainPoint> train;
  std::map<std::int64_t, double> val_loss;
  int unreadable_lines = 0;  // e.g. a last line cut short by a crash
};

// Throws zt::UserError when the file is missing or holds no training step.
MetricsSeries read_metrics(const std::filesystem::path& metrics_file);

}  // namespace zt::plot
