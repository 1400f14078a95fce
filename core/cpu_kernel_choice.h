// Which CPU kernels this process runs: the fast ones (default) or the simple references.
//
// When set, the CPU layers and AdamW run their simple reference implementations (the ones the
// fast kernels are tested against): train.cpu_reference_kernels, for checking a result and for
// measuring what the fast kernels gain with the same binary.
#pragma once

#include <atomic>

namespace zt {

inline std::atomic<bool> g_reference_cpu_kernels{false};

inline bool reference_cpu_kernels() { return g_reference_cpu_kernels.load(std::memory_order_relaxed); }
inline void set_reference_cpu_kernels(bool on) { g_reference_cpu_kernels.store(on, std::memory_order_relaxed); }

}  // namespace zt
