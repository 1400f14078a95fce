// A caching allocator in front of DeviceOps::allocate, one per device.
//
// Freed blocks are kept by size and handed to the next buffer of the same size, so a training
// step after the first takes nothing from the system: on a GPU, cudaMalloc and cudaFree
// synchronise the device and would serialise the comm stream with compute, and on the CPU a
// fresh allocation costs page faults. The pool never returns memory before the process ends.
//
// Reuse follows stream order. A block given back may be handed out again at once, because every
// user of a newly made buffer is ordered after the compute stream's current point: the compute
// stream itself, or the comm stream through the producer event each collective waits for when
// it is launched. Code that gives back memory another stream may still use must first make the
// compute stream wait for that use (RetiredBuffers and the parameter gatherer do).
//
// Idle blocks stay charged, to MemCategory::cached of the process's tracker, so that the memory
// report adds up to what the process holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "core/device.h"
#include "core/memory.h"

namespace zt {

class MemoryPool {
 public:
  // The pool of device (created on first use; lives until the process ends).
  static MemoryPool& of(Device device);

  // A block of bytes, charged to category in tracker's space of this device. Blocks are kept and
  // matched by their exact size (a training step asks for the same sizes every time); fresh is
  // set when the block came from the system, and is then zero-filled.
  void* take(std::size_t bytes, MemCategory category, MemoryTracker& tracker, bool& fresh);
  // Gives a block back: it is charged to MemCategory::cached until taken again.
  void give_back(void* pointer, std::size_t bytes, MemCategory category, MemoryTracker& tracker) noexcept;

  // What is asked of the system for a block: whole cache lines, enough for any SIMD load.
  static constexpr std::size_t kAlignment = 64;
  static std::size_t rounded(std::size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

 private:
  explicit MemoryPool(Device device) : device_(device) {}
  MemoryTracker::Space space() const;

  Device device_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> idle_;  // exact size -> block
};

// Blocks taken from the system by every pool (host and devices) since the process started: after
// the first training step, the count stays where it is.
std::int64_t system_allocation_count();

}  // namespace zt
