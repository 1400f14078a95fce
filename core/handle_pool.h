// Handles that are costly to create and destroy, kept for reuse: CUDA events, of which a training
// step records hundreds (core/cuda/cuda_stream.cpp). Thread-safe, since a handle may come back on
// another thread than the one that took it (an event the compute thread recorded, dropped by the
// comm thread). Handles still in the pool when it is destroyed are left to the process's end: the
// pools live as long as the process, and at its end the driver may already be gone.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace zt {

template <typename Handle>
class HandlePool {
 public:
  explicit HandlePool(std::function<Handle()> create) : create_(std::move(create)) {}

  // A handle from the pool, or a new one when the pool is empty.
  Handle take() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        Handle handle = idle_.back();
        idle_.pop_back();
        return handle;
      }
    }
    return create_();
  }
  // Back to the pool for the next take().
  void give(Handle handle) {
    std::lock_guard lock(mutex_);
    idle_.push_back(handle);
  }
  std::size_t idle() const {
    std::lock_guard lock(mutex_);
    return idle_.size();
  }

 private:
  std::function<Handle()> create_;
  mutable std::mutex mutex_;
  std::vector<Handle> idle_;
};

}  // namespace zt
