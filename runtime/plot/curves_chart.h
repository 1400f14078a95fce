// The picture of a run: loss (training and validation) above throughput, both against the step.
#pragma once

#include <filesystem>
#include <string_view>

#include "runtime/plot/metrics_series.h"

namespace zt::plot {

// Draws series into png (created or replaced) with gnuplot. Throws zt::UserError when gnuplot is
// missing or fails.
void draw_curves(const MetricsSeries& series, std::string_view title, const std::filesystem::path& png);

}  // namespace zt::plot
