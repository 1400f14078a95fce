// `zerotrain bench-comm`: the comm benchmark (comm/comm_benchmark.h) on the chosen backend, run
// under mpirun with one process per rank; rank 0 prints the table.
#include <fmt/format.h>

#include <ostream>
#include <string>

#include "comm/comm_benchmark.h"
#include "comm/comm_options.h"
#include "comm/mpi_bootstrap.h"
#include "runtime/cli/command.h"
#include "runtime/cli/numeric_option.h"
#include "core/log.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  options.add_options()
      ("backend", po::value<std::string>()->default_value("auto"), "comm backend: auto, mpi or nccl")
      ("device", po::value<std::string>()->default_value("cpu"), "buffers on cpu or cuda:N")
      ("dtype", po::value<std::string>()->default_value("f32"), "element type: f32, bf16 or f16")
      ("ops", po::value<std::string>()->default_value("all"),
       "collectives: all, or a comma-separated list of all_reduce, reduce_scatter, all_gather, broadcast")
      ("min-bytes", po::value<std::string>()->default_value("8"), "smallest size (bytes; K, M, G suffixes)")
      ("max-bytes", po::value<std::string>()->default_value("256M"), "largest size; sizes double from min-bytes")
      ("iters", po::value<int>()->default_value(0), "timed iterations per size; 0 adapts them to the size")
      ("warmup", po::value<int>()->default_value(1), "untimed iterations per size")
      ("timeout", po::value<double>()->default_value(300.0), "comm timeout in seconds");
}

// An option value that does not parse is a command-line mistake (exit status 2), named by option.
template <typename Parse> auto parse_option(const po::variables_map& options, const char* name, Parse parse) {
  const std::string& text = options[name].as<std::string>();
  try {
    return parse(text);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--{}: {}", name, e.what()));
  }
}

int run(const po::variables_map& options, std::ostream& out) {
  CommBenchmarkOptions bench;
  bench.comm.backend = parse_option(options, "backend", [](const std::string& t) { return parse_comm_backend(t); });
  bench.comm.timeout_s = option_in(options, "timeout", 1e-3, 1e6);
  bench.comm.name = "bench";
  bench.device = parse_option(options, "device", [](const std::string& t) { return Device::parse(t); });
  bench.dtype = parse_option(options, "dtype", [](const std::string& t) { return parse_dtype(t); });
  bench.ops = parse_option(options, "ops", [](const std::string& t) { return parse_collective_list(t); });
  bench.min_bytes = parse_option(options, "min-bytes", [](const std::string& t) { return parse_byte_size(t); });
  bench.max_bytes = parse_option(options, "max-bytes", [](const std::string& t) { return parse_byte_size(t); });
  bench.iters = option_in(options, "iters", 0, 1 << 24);
  bench.warmup = option_in(options, "warmup", 0, 1 << 24);

  MpiSession mpi(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  log::set_rank(rank);
  CommBenchmarkSummary summary = run_comm_benchmark(bench, out);
  return summary.wrong_elements == 0 ? 0 : 1;
}

}  // namespace

Command bench_comm_command() {
  return {
      .name = "bench-comm",
      .summary = "Measure every collective over a range of sizes (run under mpirun)",
      .usage = "mpirun -np N zerotrain bench-comm [--backend auto|mpi|nccl] [--device cpu|cuda] [--dtype f32]\n"
               "       [--ops all] [--min-bytes 8] [--max-bytes 256M] [--iters 0] [--warmup 1]",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
