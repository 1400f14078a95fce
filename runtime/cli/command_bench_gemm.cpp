// `zerotrain bench-gemm`: the sgemm rate of this process's BLAS on given shapes, the ceiling that
// CPU runs measure their MFU against (train.cpu_peak_gflops), and which OpenBLAS kernel family runs.
#include <fmt/format.h>

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "models/cpu/blas_kernels.h"
#include "models/ops/linear.h"
#include "runtime/cli/command.h"
#include "runtime/cli/numeric_option.h"
#include "runtime/train/cpu_threads.h"

namespace zt::cli {
namespace {

struct Shape {
  int m, n, k;
};

void declare_options(po::options_description& options) {
  options.add_options()
      ("shapes", po::value<std::string>()->default_value("512x1024x256,1024x2048x512,2048x2048x2048"),
       "comma-separated MxNxK: C (M, N) = A (M, K) B^T (K, N), as a Linear layer's forward "
       "(the defaults: GPT-2 4x256 and 6x512 MLP products, and a large square)")
      ("threads", po::value<int>()->default_value(0), "BLAS threads; 0 = every CPU this process may run on")
      ("seconds", po::value<double>()->default_value(0.5), "time spent on each shape (at least 3 products)");
}

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    Shape s{};
    char x1 = 0, x2 = 0;
    std::istringstream in(item);
    if (!(in >> s.m >> x1 >> s.n >> x2 >> s.k) || x1 != 'x' || x2 != 'x' || !in.eof() || s.m < 1 || s.n < 1 ||
        s.k < 1)
      throw UsageError(fmt::format("--shapes: '{}' is not MxNxK with positive sizes (e.g. 512x1024x256)", item));
    shapes.push_back(s);
  }
  if (shapes.empty()) throw UsageError("--shapes: no shape given");
  return shapes;
}

int run(const po::variables_map& options, std::ostream& out) {
  const std::vector<Shape> shapes = parse_shapes(options["shapes"].as<std::string>());
  const int threads_option = option_in(options, "threads", 0, 1 << 16);
  const double seconds = option_in(options, "seconds", 0.0, 3600.0);
  const int threads = cpu_threads_for_this_rank(threads_option, 1, 1);
  models::cpu::set_compute_threads(threads);
  const std::string wanted = models::cpu::coretype_for_cpu_flags(models::cpu::cpu_flags());
  out << fmt::format("BLAS: {}\nkernels: {} (this CPU's flags ask for {})\nthreads: {}\n",
                     models::cpu::blas_config(), models::cpu::blas_core_name(), wanted.empty() ? "generic" : wanted,
                     threads);
  out << fmt::format("{:>6} {:>6} {:>6} {:>9}\n", "M", "N", "K", "GFLOP/s");
  for (const Shape& s : shapes)
    out << fmt::format("{:>6} {:>6} {:>6} {:>9.1f}\n", s.m, s.n, s.k,
                       models::cpu::measure_sgemm_gflops(s.m, s.n, s.k, seconds));
  return 0;
}

}  // namespace

Command bench_gemm_command() {
  return {
      .name = "bench-gemm",
      .summary = "Measure this machine's sgemm rate (the CPU MFU ceiling) and show the BLAS kernels in use",
      .usage = "zerotrain bench-gemm [--shapes 512x1024x256,...] [--threads 0] [--seconds 0.5]",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
