#include "runtime/train/memory_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "core/device_ops.h"
#include "core/memory.h"

namespace zt {
namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A decimal integer at the start of `text` (after blanks); nothing for "max" or garbage.
std::optional<std::int64_t> leading_integer(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

// This process's cgroup v2 directory, from the "0::/path" line of /proc/self/cgroup.
std::string cgroup_v2_directory() {
  std::istringstream lines(read_text("/proc/self/cgroup").value_or(""));
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("0::")) return "/sys/fs/cgroup" + line.substr(3);
  return "/sys/fs/cgroup";
}

// What the cgroup still allows (limit - usage), when a limit is set.
std::optional<AvailableMemory> cgroup_available() {
  const std::string v2 = cgroup_v2_directory();
  std::optional<std::int64_t> limit = leading_integer(read_text(v2 + "/memory.max").value_or(""));
  std::optional<std::int64_t> usage = leading_integer(read_text(v2 + "/memory.current").value_or(""));
  std::string source = "cgroup memory.max - memory.current";
  if (!limit) {
    limit = leading_integer(read_text("/sys/fs/cgroup/memory/memory.limit_in_bytes").value_or(""));
    usage = leading_integer(read_text("/sys/fs/cgroup/memory/memory.usage_in_bytes").value_or(""));
    source = "cgroup memory.limit_in_bytes - memory.usage_in_bytes";
  }
  // cgroup v1 writes "no limit" as a number near 2^63.
  if (!limit || *limit >= (std::int64_t{1} << 60)) return std::nullopt;
  return AvailableMemory{std::max<std::int64_t>(0, *limit - usage.value_or(0)), source};
}

}  // namespace

std::optional<std::int64_t> parse_mem_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  const std::size_t at = meminfo.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  std::optional<std::int64_t> kib = leading_integer(meminfo.substr(at + kKey.size()));
  if (!kib || *kib < 0 || *kib > (std::int64_t{1} << 52)) return std::nullopt;
  return *kib * 1024;
}

std::optional<AvailableMemory> available_host_memory() {
  std::optional<AvailableMemory> best;
  if (std::optional<std::int64_t> bytes = parse_mem_available(read_text("/proc/meminfo").value_or("")))
    best = AvailableMemory{*bytes, "MemAvailable in /proc/meminfo"};
  if (std::optional<AvailableMemory> cgroup = cgroup_available(); cgroup && (!best || cgroup->bytes < best->bytes))
    best = cgroup;
  return best;
}

std::int64_t planned_rank_bytes(const MemoryPlan& plan) {
  return plan.model_states() + plan.buckets + plan.activations + plan.gathered_bound;
}

std::optional<std::string> memory_shortfall(const MemoryPlan& plan, int ranks_sharing, const AvailableMemory& available,
                                            std::string_view where) {
  const std::int64_t per_rank = planned_rank_bytes(plan);
  const std::int64_t needed = per_rank * ranks_sharing;
  if (needed <= available.bytes) return std::nullopt;
  const std::string ranks =
      ranks_sharing == 1 ? "" : fmt::format(" x {} ranks on this host = {}", ranks_sharing, format_bytes(needed));
  return fmt::format(
      "not enough memory: the run needs {} per rank{} ({} model states, {} buckets, {} activations, {} gathered "
      "parameters; `zerotrain plan` shows the plan) but {} has {} available ({}); use a smaller model or micro "
      "batch, a higher zero_optimization.stage, or more ranks on more machines",
      format_bytes(per_rank), ranks, format_bytes(plan.model_states()), format_bytes(plan.buckets),
      format_bytes(plan.activations), format_bytes(plan.gathered_bound), where, format_bytes(available.bytes),
      available.source);
}

std::optional<std::string> rank_memory_problem(const MemoryPlan& plan, Device device, int ranks_on_host) {
  if (device.is_cpu()) {
    const std::optional<AvailableMemory> host = available_host_memory();
    if (!host) return std::nullopt;
    return memory_shortfall(plan, ranks_on_host, *host, "host memory");
  }
  const AvailableMemory free{static_cast<std::int64_t>(device_ops(device).memory_info(device).free), "cudaMemGetInfo"};
  return memory_shortfall(plan, 1, free, device.str());
}

}  // namespace zt
