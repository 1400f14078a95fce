#include "runtime/plot/curves_chart.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <fstream>
#include <iterator>

#include "core/error.h"
#include "core/safe_file.h"
#include "runtime/plot/gnuplot.h"

namespace zt::plot {
namespace {

void write_train_data(const MetricsSeries& series, const std::filesystem::path& file) {
  std::ofstream out(file);
  out << "# step loss tokens_per_s\n";
  for (const auto& [step, point] : series.train) fmt::print(out, "{} {:.9g} {:.9g}\n", step, point.loss, point.tokens_per_s);
}

void write_val_data(const MetricsSeries& series, const std::filesystem::path& file) {
  std::ofstream out(file);
  out << "# step val_loss\n";
  for (const auto& [step, loss] : series.val_loss) fmt::print(out, "{} {:.9g}\n", step, loss);
}

// The data, the script and the picture are files of the scratch directory, named relative to it
// (gnuplot runs there): the script holds no path the user chose, so none can inject commands.
constexpr const char* kPictureFile = "curves.png";

std::string chart_script(const MetricsSeries& series, std::string_view title) {
  const std::string train = gnuplot_quote("train.dat");
  const std::string val = gnuplot_quote("val.dat");
  std::string loss_plot = fmt::format("plot {} using 1:2 with lines lw 1.5 lc rgb '#1f77b4' title 'train'", train);
  if (!series.val_loss.empty())
    loss_plot += fmt::format(", {} using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#d62728' title 'validation'",
                             val);
  // pngcairo draws smoother text and lines; plain png is the fallback of gnuplot builds without cairo.
  return fmt::format(R"gnuplot(if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {{
  set terminal pngcairo size 1000,800 font "sans,11"
}} else {{
  set terminal png size 1000,800
}}
set output {output}
set encoding utf8
set multiplot layout 2,1 title {title} noenhanced font ",13"
set grid
set key top right
set xlabel "step"
set title "Loss"
set ylabel "loss (nats per token)"
{loss_plot}
set title "Throughput"
set ylabel "tokens/s"
set format y "%.1s%c"
set yrange [0:*]
plot {train} using 1:3 with lines lw 1.5 lc rgb '#2ca02c' title 'tokens/s (all ranks)'
unset multiplot
)gnuplot",
                     fmt::arg("output", gnuplot_quote(kPictureFile)),
                     fmt::arg("title", gnuplot_quote(title)), fmt::arg("loss_plot", loss_plot),
                     fmt::arg("train", train));
}

}  // namespace

void draw_curves(const MetricsSeries& series, std::string_view title, const std::filesystem::path& png) {
  // A private directory under the system's temp directory for gnuplot's inputs and picture.
  const TemporaryDirectory scratch(std::filesystem::temp_directory_path() / "zerotrain-plot-");
  write_train_data(series, scratch.path() / "train.dat");
  write_val_data(series, scratch.path() / "val.dat");
  const std::filesystem::path script = scratch.path() / "curves.gp";
  std::ofstream(script) << chart_script(series, title);
  run_gnuplot(script);
  const std::filesystem::path drawn = scratch.path() / kPictureFile;
  std::ifstream picture(drawn, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(picture)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw UserError(fmt::format("gnuplot ran but drew no picture for {}", png.string()));
  if (png.has_parent_path()) std::filesystem::create_directories(png.parent_path());
  // A new file renamed into place: a link planted at png is replaced, never written through.
  write_file_atomically(png, bytes);
}

}  // namespace zt::plot
