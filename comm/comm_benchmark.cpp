#include "comm/comm_benchmark.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <ostream>

#include "comm/make_communicator.h"
#include "core/device_ops.h"
#include "core/cpu_stream.h"
#include "core/error.h"
#include "comm/mpi_check.h"

namespace zt {

namespace {

// Element counts of one benchmark row.
struct Shape {
  std::size_t in = 0;
  std::size_t out = 0;
  std::size_t bytes = 0;  // the reported size: the larger buffer
};

Shape shape_of(CollectiveKind kind, std::size_t bytes, DType dtype, std::size_t n) {
  std::size_t count = bytes / dtype_size(dtype);
  switch (kind) {
    case CollectiveKind::reduce_scatter: count = count / n * n; return {count, count / n, count * dtype_size(dtype)};
    case CollectiveKind::all_gather: count = count / n * n; return {count / n, count, count * dtype_size(dtype)};
    default: return {count, count, count * dtype_size(dtype)};
  }
}

// Small integers (exact in every dtype for the world sizes benchmarked) that depend on rank and
// position, so a wrong sum, chunk or root shows in the check.
float input_value(CollectiveKind kind, int rank, std::size_t i) {
  switch (kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::reduce_scatter: return static_cast<float>((i + static_cast<std::size_t>(rank)) % 4);
    case CollectiveKind::all_gather: return static_cast<float>((i + static_cast<std::size_t>(rank)) % 8);
    default: return static_cast<float>(1 + (i + 5 * static_cast<std::size_t>(rank)) % 8);
  }
}

float expected_value(CollectiveKind kind, int rank, int n, std::size_t j, std::size_t chunk) {
  switch (kind) {
    case CollectiveKind::all_reduce: {
      float sum = 0;
      for (int r = 0; r < n; ++r) sum += input_value(kind, r, j);
      return sum;
    }
    case CollectiveKind::reduce_scatter: {
      float sum = 0;
      for (int r = 0; r < n; ++r) sum += input_value(kind, r, static_cast<std::size_t>(rank) * chunk + j);
      return sum;
    }
    case CollectiveKind::all_gather: return input_value(kind, static_cast<int>(j / chunk), j % chunk);
    default: return input_value(kind, 0, j);
  }
}

std::size_t count_wrong(Communicator& comm, CollectiveKind kind, const BufferView& out, std::size_t chunk) {
  Buffer host = Buffer::host(out.dtype, out.numel, MemCategory::workspace, Buffer::HostMemory::pageable);
  copy_now(host.view(), out);
  std::vector<float> values(out.numel);
  convert_host(host.data(), out.dtype, values.data(), DType::f32, out.numel);
  std::size_t wrong = 0;
  for (std::size_t j = 0; j < values.size(); ++j)
    if (values[j] != expected_value(kind, comm.rank(), comm.world_size(), j, chunk)) ++wrong;
  return wrong;
}

Work issue(Communicator& comm, CollectiveKind kind, const Buffer& in, const Buffer& out, Stream& producer) {
  switch (kind) {
    case CollectiveKind::all_reduce: return comm.all_reduce(in.view(), out.view(), ReduceOp::sum, producer);
    case CollectiveKind::reduce_scatter: return comm.reduce_scatter(in.view(), out.view(), ReduceOp::sum, producer);
    case CollectiveKind::all_gather: return comm.all_gather(in.view(), out.view(), producer);
    case CollectiveKind::broadcast: return comm.broadcast(in.view(), out.view(), 0, producer);
    case CollectiveKind::barrier: return comm.barrier(producer);
  }
  return Work();
}

struct RowResult {
  double median_us = 0;
  std::size_t wrong = 0;
};

RowResult run_row(Communicator& comm, CollectiveKind kind, const Shape& shape, DType dtype, int warmup, int iters) {
  CpuStream host_stream(CpuStream::Mode::inline_on_caller, "bench-host");
  Buffer in(comm.device(), dtype, shape.in, MemCategory::workspace);
  Buffer out(comm.device(), dtype, shape.out, MemCategory::workspace);
  {
    std::vector<float> values(shape.in);
    for (std::size_t i = 0; i < shape.in; ++i) values[i] = input_value(kind, comm.rank(), i);
    Buffer host = Buffer::host(dtype, shape.in, MemCategory::workspace, Buffer::HostMemory::pinned);
    convert_host(values.data(), DType::f32, host.data(), dtype, shape.in);
    copy_now(in.view(), host.view());
  }
  RowResult result;
  issue(comm, kind, in, out, host_stream).wait();
  std::size_t chunk = kind == CollectiveKind::all_gather ? shape.in : shape.out;
  result.wrong = count_wrong(comm, kind, out.view(), chunk);
  for (int i = 0; i < warmup; ++i) issue(comm, kind, in, out, host_stream).wait();
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    comm.barrier(host_stream).wait();
    auto start = std::chrono::steady_clock::now();
    issue(comm, kind, in, out, host_stream).wait();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  double median = times[times.size() / 2];
  // The slowest rank's median: a collective is only as fast as its last participant.
  ZT_MPI_CHECK(MPI_Allreduce(&median, &result.median_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  unsigned long long wrong = result.wrong;
  unsigned long long total_wrong = 0;
  ZT_MPI_CHECK(MPI_Allreduce(&wrong, &total_wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  result.wrong = static_cast<std::size_t>(total_wrong);
  return result;
}

}  // namespace

int benchmark_iterations(const CommBenchmarkOptions& options, std::size_t bytes) {
  if (options.iters > 0) return options.iters;
  std::size_t by_size = kAdaptiveBytes / std::max<std::size_t>(bytes, 1);
  return static_cast<int>(std::clamp<std::size_t>(by_size, kMinAdaptiveIters, kMaxAdaptiveIters));
}

double bus_bandwidth_factor(CollectiveKind kind, int world_size) {
  double n = world_size;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather: return (n - 1) / n;
    default: return 1.0;
  }
}

CommBenchmarkSummary run_comm_benchmark(const CommBenchmarkOptions& options, std::ostream& out) {
  if (options.min_bytes == 0 || options.min_bytes > options.max_bytes)
    throw UserError(fmt::format("bench-comm: sizes must satisfy 0 < min-bytes <= max-bytes (got {} and {})",
                                options.min_bytes, options.max_bytes));
  std::unique_ptr<Communicator> comm = make_communicator(options.comm, options.device);
  const int n = comm->world_size();
  const bool print = comm->rank() == 0;
  if (print) {
    out << fmt::format("# zerotrain bench-comm: backend {}, device {}, {} ranks ({} on this host), dtype {}\n",
                       comm->backend_name(), options.device.str(), n, comm->local_size(), dtype_name(options.dtype));
    out << fmt::format("# iterations: {}, warmup {}; time: median over iterations (each after a barrier), max over "
                       "ranks; out-of-place\n",
                       options.iters > 0 ? std::to_string(options.iters)
                                         : fmt::format("adaptive ({}..{}, about {} MiB per size)", kMinAdaptiveIters,
                                                       kMaxAdaptiveIters, kAdaptiveBytes >> 20),
                       options.warmup);
    out << fmt::format("# busbw = algbw x {:.3f} (all_reduce), x {:.3f} (reduce_scatter, all_gather), x 1 (broadcast)\n",
                       bus_bandwidth_factor(CollectiveKind::all_reduce, n),
                       bus_bandwidth_factor(CollectiveKind::all_gather, n));
    out << fmt::format("#\n# {:>14} {:>12} {:>12} {:>6} {:>6} {:>12} {:>12} {:>12} {:>8}\n", "op", "size(B)", "count",
                       "type", "redop", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
    out.flush();
  }
  CommBenchmarkSummary summary;
  for (CollectiveKind kind : options.ops) {
    double busbw_sum = 0;
    int busbw_rows = 0;
    for (std::size_t bytes = options.min_bytes; bytes <= options.max_bytes; bytes *= 2) {
      Shape shape = shape_of(kind, bytes, options.dtype, static_cast<std::size_t>(n));
      if (shape.bytes == 0) continue;  // fewer elements than ranks: nothing to scatter or gather
      RowResult row = run_row(*comm, kind, shape, options.dtype, options.warmup, benchmark_iterations(options, bytes));
      double algbw = static_cast<double>(shape.bytes) / (row.median_us * 1e-6) / 1e9;
      double busbw = algbw * bus_bandwidth_factor(kind, n);
      busbw_sum += busbw;
      ++busbw_rows;
      ++summary.rows;
      summary.wrong_elements += row.wrong;
      bool reduces = kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter;
      if (print) {
        out << fmt::format("  {:>14} {:>12} {:>12} {:>6} {:>6} {:>12.1f} {:>12.3f} {:>12.3f} {:>8}\n",
                           collective_name(kind), shape.bytes, std::max(shape.in, shape.out),
                           dtype_name(options.dtype), reduces ? "sum" : "none", row.median_us, algbw, busbw, row.wrong);
        out.flush();
      }
    }
    if (print && busbw_rows)
      out << fmt::format("# {} average busbw: {:.3f} GB/s\n", collective_name(kind), busbw_sum / busbw_rows);
  }
  if (print) out << fmt::format("# wrong elements in total: {}\n", summary.wrong_elements);
  return summary;
}

std::size_t parse_byte_size(std::string_view text) {
  std::size_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::size_t shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "KiB" || unit == "KB") shift = 10;
  else if (unit == "M" || unit == "MiB" || unit == "MB") shift = 20;
  else if (unit == "G" || unit == "GiB" || unit == "GB") shift = 30;
  else ec = std::errc::invalid_argument;
  if (ec != std::errc() || end == text.data())
    throw UserError(fmt::format("invalid size '{}' (expected bytes like 8, 64K, 256MiB or 1G; units are powers of 1024)",
                                text));
  return value << shift;
}

std::vector<CollectiveKind> parse_collective_list(std::string_view text) {
  if (text == "all")
    return {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather,
            CollectiveKind::broadcast};
  std::vector<CollectiveKind> kinds;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    bool found = false;
    for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather,
                                CollectiveKind::broadcast})
      if (collective_name(kind) == name) {
        kinds.push_back(kind);
        found = true;
      }
    if (!found)
      throw UserError(fmt::format("unknown collective '{}' (expected all, or a comma-separated list of all_reduce, "
                                  "reduce_scatter, all_gather, broadcast)",
                                  name));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return kinds;
}

}  // namespace zt
