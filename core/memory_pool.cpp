#include "core/memory_pool.h"

#include <atomic>
#include <list>
#include <memory>

#include "core/device_ops.h"

namespace zt {
namespace {

std::atomic<std::int64_t> g_system_allocations{0};

struct PoolRegistry {
  std::mutex mutex;
  std::list<std::unique_ptr<MemoryPool>> pools;  // list: pools never move
};

}  // namespace

MemoryPool& MemoryPool::of(Device device) {
  static PoolRegistry* registry = new PoolRegistry();  // never destroyed: buffers may outlive main
  std::lock_guard lock(registry->mutex);
  for (auto& pool : registry->pools)
    if (pool->device_ == device) return *pool;
  registry->pools.push_back(std::unique_ptr<MemoryPool>(new MemoryPool(device)));
  return *registry->pools.back();
}

MemoryTracker::Space MemoryPool::space() const {
  return device_.is_cuda() ? MemoryTracker::Space::device : MemoryTracker::Space::host;
}

void* MemoryPool::take(std::size_t size, MemCategory category, MemoryTracker& tracker, bool& fresh) {
  {
    std::lock_guard lock(mutex_);
    auto it = idle_.find(size);
    if (it != idle_.end()) {
      void* pointer = it->second;
      idle_.erase(it);
      MemoryTracker::process().release(space(), MemCategory::cached, static_cast<std::int64_t>(size));
      tracker.charge(space(), category, static_cast<std::int64_t>(size));
      fresh = false;
      return pointer;
    }
  }
  DeviceOps& ops = device_ops(device_);
  void* pointer = ops.allocate(device_, rounded(size));
  ops.zero_now(device_, pointer, size);
  ++g_system_allocations;
  tracker.charge(space(), category, static_cast<std::int64_t>(size));
  fresh = true;
  return pointer;
}

void MemoryPool::give_back(void* pointer, std::size_t size, MemCategory category, MemoryTracker& tracker) noexcept {
  tracker.release(space(), category, static_cast<std::int64_t>(size));
  // Idle blocks are charged to the process's tracker, which outlives every other.
  MemoryTracker::process().charge(space(), MemCategory::cached, static_cast<std::int64_t>(size));
  std::lock_guard lock(mutex_);
  idle_.emplace(size, pointer);
}

std::int64_t system_allocation_count() { return g_system_allocations.load(); }

}  // namespace zt
