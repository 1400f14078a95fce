#include "runtime/train/cpu_contention_watch.h"

#include <utility>

#include <fmt/format.h>

namespace zt {

CpuContentionWatch::CpuContentionWatch(CpuAffinity affinity) : affinity_(std::move(affinity)) {}

std::optional<std::string> CpuContentionWatch::add(std::int64_t step, const StepStats& stats) {
  if (warned_ || !stats.cpu_wait_ms) return std::nullopt;
  if (std::exchange(first_, false)) return std::nullopt;
  if (window_steps_ == 0) window_first_ = step;
  ++window_steps_;
  wait_ms_ += *stats.cpu_wait_ms;
  step_ms_ += stats.step_ms;
  comm_cpu_ms_ += stats.comm_cpu_ms;
  if (window_steps_ < kWindowSteps) return std::nullopt;
  const double share = step_ms_ > 0 ? wait_ms_ / step_ms_ : 0.0;
  const double wait_ms = wait_ms_, step_ms = step_ms_, comm_cpu_ms = comm_cpu_ms_;
  window_steps_ = 0;
  wait_ms_ = step_ms_ = comm_cpu_ms_ = 0.0;
  if (share < kWarnShare) return std::nullopt;
  warned_ = true;
  std::string advice;
  if (affinity_.count == 1 && affinity_.online_cpus > 1)
    advice = fmt::format("This rank is bound to CPU {} of {}, so the kernel cannot move it off a busy core: on a "
                         "shared machine launch with `zt-run --bind-to none` (mpirun: `--bind-to none`), or free the "
                         "core.",
                         affinity_.list, affinity_.online_cpus);
  else if (affinity_.count > 0 && affinity_.count < affinity_.online_cpus)
    advice = fmt::format("It may run on CPUs {} of {} (its binding or cpuset), and they are busy: give the job more "
                         "CPUs or fewer ranks, or stop the other work.",
                         affinity_.list, affinity_.online_cpus);
  else
    advice = "The machine has fewer free cores than the job's threads need: run fewer ranks or train.cpu_threads, or "
             "stop the other work.";
  return fmt::format(
      "steps {}-{}: this rank's compute and comm threads waited {:.0f} ms for a CPU in {:.0f} ms of steps ({:.0f}% of "
      "the steps' time, the two threads together; the comm thread itself used {:.0f} ms of CPU): other work is taking "
      "CPU time from this rank, and every rank waits for the slowest. {}",
      window_first_, step, wait_ms, step_ms, 100.0 * share, comm_cpu_ms, advice);
}

}  // namespace zt
