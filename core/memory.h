// Memory accounting: every byte zerotrain allocates is charged to a category, so a run can be
// held against the ZeRO memory model (DESIGN.md) and the report says where memory went.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace zt {

// params/grads/optimizer are the model states of the ZeRO memory model; gathered holds ZeRO-3
// parameters gathered for a layer's forward/backward; buckets the gradient buckets and reduction
// outputs; comm_staging host copies of device buffers for MPI; cached the freed blocks the
// memory pool keeps for the next buffer of the same size (memory_pool.h).
enum class MemCategory : std::uint8_t {
  params, grads, optimizer, gathered, buckets, activations, workspace, comm_staging, cached
};
inline constexpr int kMemCategoryCount = 9;

std::string_view mem_category_name(MemCategory category);

struct MemStats {
  std::int64_t current = 0;
  std::int64_t peak = 0;
};

// Thread-safe: buffers are allocated and freed from the compute and comm threads alike.
// Host and device memory are tracked separately (a CPU-only run has only host bytes).
class MemoryTracker {
 public:
  enum class Space : std::uint8_t { host, device };

  void charge(Space space, MemCategory category, std::int64_t bytes);
  void release(Space space, MemCategory category, std::int64_t bytes);

  MemStats stats(Space space, MemCategory category) const;
  // Peak of the total, which is not the sum of the per-category peaks.
  MemStats total(Space space) const;
  // Starts a new peak window: peaks become the current values.
  void reset_peaks();
  // One line per non-empty category: "params 1.50 MiB (peak 1.50 MiB)".
  std::string report(Space space) const;

  // The tracker that buffers use unless they are given another.
  static MemoryTracker& process();

 private:
  struct SpaceStats {
    std::array<MemStats, kMemCategoryCount> categories{};
    MemStats total{};
  };
  mutable std::mutex mutex_;
  std::array<SpaceStats, 2> spaces_{};
};

// "1.50 MiB", "512 B": binary units, two decimals.
std::string format_bytes(std::int64_t bytes);

}  // namespace zt
