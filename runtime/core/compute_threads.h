// How this process's CPU compute kernels run.
//
// The number of threads this process's CPU compute kernels use (the element-wise kernels and AdamW
// run their OpenMP regions with exactly this many), whichever thread calls them: the optimizer
// step may run on the comm thread, whose OpenMP default would be every core of the machine.
// models::cpu::set_compute_threads sets it together with OpenBLAS's thread count.
#pragma once

#include <atomic>

namespace zt {

inline std::atomic<int> g_compute_threads{1};

inline int compute_threads() { return g_compute_threads.load(std::memory_order_relaxed); }
inline void set_compute_threads(int threads) {
  g_compute_threads.store(threads < 1 ? 1 : threads, std::memory_order_relaxed);
}

// When set, the CPU layers and AdamW run their simple reference implementations (the ones the
// fast kernels are tested against) on one thread: train.cpu_reference_kernels, for checking a
// result and for measuring what the fast kernels gain with the same binary.
inline std::atomic<bool> g_reference_cpu_kernels{false};

inline bool reference_cpu_kernels() { return g_reference_cpu_kernels.load(std::memory_order_relaxed); }
inline void set_reference_cpu_kernels(bool on) { g_reference_cpu_kernels.store(on, std::memory_order_relaxed); }

}  // namespace zt
