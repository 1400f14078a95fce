// Before the engine allocates anything: does the planned memory of a rank (zero/memory_plan.h,
// the numbers of `zerotrain plan`) fit where it will live? A model too big for the machine then
// stops at start-up naming both numbers, instead of being killed by the OOM killer or ending with
// `std::bad_alloc` half-way through the allocations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/device.h"
#include "zero/memory_plan.h"

namespace zt {

// Memory this process may still take, and where that number comes from.
struct AvailableMemory {
  std::int64_t bytes = 0;
  std::string source;  // "MemAvailable in /proc/meminfo", "cgroup memory.max - memory.current", "cudaMemGetInfo"
};

// The host memory available to this process: MemAvailable, lowered to what its cgroup (v2
// memory.max, or v1 memory.limit_in_bytes) still allows when that is less. Nothing when neither
// can be read.
std::optional<AvailableMemory> available_host_memory();

// The "MemAvailable:" value of /proc/meminfo text, in bytes; nothing when absent.
std::optional<std::int64_t> parse_mem_available(std::string_view meminfo);

// Bytes one rank allocates according to the plan (model states, buckets, activations, ZeRO-3's
// bound on gathered parameters).
std::int64_t planned_rank_bytes(const MemoryPlan& plan);

// What is wrong when `ranks_sharing` ranks planned as `plan` do not fit into `available`; nothing
// when they do. `where` names the memory ("host memory", "cuda:0").
std::optional<std::string> memory_shortfall(const MemoryPlan& plan, int ranks_sharing, const AvailableMemory& available,
                                            std::string_view where);

// The check for this rank on `device`: host memory shared by the `ranks_on_host` ranks of this
// host for the CPU, the device's free memory for a GPU. Nothing when it fits or when the
// available memory cannot be read.
std::optional<std::string> rank_memory_problem(const MemoryPlan& plan, Device device, int ranks_on_host);

}  // namespace zt
