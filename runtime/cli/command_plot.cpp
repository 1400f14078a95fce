// `zerotrain plot RUN_DIR`: loss and throughput curves of a run as a PNG, from its metrics.jsonl.
#include <fmt/format.h>

#include <filesystem>
#include <ostream>
#include <string>

#include "runtime/cli/command.h"
#include "runtime/plot/curves_chart.h"
#include "runtime/plot/metrics_series.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  options.add_options()
      ("run-dir", po::value<std::string>()->value_name("RUN_DIR")->required(),
       "the run's directory (logging.run_dir), holding metrics.jsonl; also the first argument")
      ("output,o", po::value<std::string>()->value_name("PNG"), "the picture to write (default RUN_DIR/curves.png)");
}

void declare_positional(po::positional_options_description& positional) { positional.add("run-dir", 1); }

int run(const po::variables_map& options, std::ostream& out) {
  const std::filesystem::path run_dir = options["run-dir"].as<std::string>();
  const std::filesystem::path png =
      options.count("output") ? std::filesystem::path(options["output"].as<std::string>()) : run_dir / "curves.png";
  plot::MetricsSeries series = plot::read_metrics(run_dir / "metrics.jsonl");
  plot::draw_curves(series, fmt::format("zerotrain run {}", run_dir.string()), png);
  out << fmt::format("wrote {} ({} steps, {} evaluations", png.string(), series.train.size(), series.val_loss.size());
  if (series.unreadable_lines > 0) out << fmt::format("; skipped {} unreadable lines", series.unreadable_lines);
  out << ")\n";
  return 0;
}

}  // namespace

Command plot_command() {
  return {
      .name = "plot",
      .summary = "Draw a run's loss (train and validation) and throughput curves into a PNG with gnuplot",
      .usage = "zerotrain plot RUN_DIR [--output PNG]",
      .declare_options = declare_options,
      .declare_positional = declare_positional,
      .run = run,
  };
}

}  // namespace zt::cli
