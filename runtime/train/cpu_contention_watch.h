// Notices when something else takes CPU time from this rank, and says so once with what to do.
//
// On a shared machine a rank's compute thread can be ready to run while the kernel runs another
// process on its core; every other rank then waits for it at the next collective, and the step
// looks slow for no visible reason. The kernel counts that time (StepStats::cpu_wait_ms); when it
// reaches kWarnShare of a window of steps, the watch returns one warning naming the share, the
// rank's CPU binding and the remedy. A rank bound to one core (Open MPI's mpirun binds each of two
// ranks to a core) cannot be moved off a busy core by the kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/cpu_contention.h"
#include "zero/engine.h"

namespace zt {

class CpuContentionWatch {
 public:
  static constexpr int kWindowSteps = 20;
  static constexpr double kWarnShare = 0.10;

  // affinity: the CPUs this rank may use (process_cpu_affinity()).
  explicit CpuContentionWatch(CpuAffinity affinity);

  // The warning to log after `step`, at most once per run; the run's first step (start-up) is not counted.
  std::optional<std::string> add(std::int64_t step, const StepStats& stats);

 private:
  CpuAffinity affinity_;
  bool first_ = true;
  bool warned_ = false;
  std::int64_t window_first_ = 0;
  int window_steps_ = 0;
  double wait_ms_ = 0.0, step_ms_ = 0.0, comm_cpu_ms_ = 0.0;
};

}  // namespace zt
