#include "core/cpu_contention.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include <fmt/format.h>

namespace zt {

namespace {

std::optional<double> run_queue_wait_ms(const std::string& schedstat) {
  // "<ns on CPU> <ns waiting on a run queue> <timeslices>"
  std::ifstream in(schedstat);
  unsigned long long on_cpu_ns = 0, waiting_ns = 0;
  if (!(in >> on_cpu_ns >> waiting_ns)) return std::nullopt;
  return static_cast<double>(waiting_ns) * 1e-6;
}

}  // namespace

std::optional<double> thread_run_queue_wait_ms() { return run_queue_wait_ms("/proc/thread-self/schedstat"); }

std::optional<double> thread_run_queue_wait_ms(pid_t tid) {
  return run_queue_wait_ms(fmt::format("/proc/self/task/{}/schedstat", tid));
}

pid_t current_thread_id() { return static_cast<pid_t>(syscall(SYS_gettid)); }

double cpu_clock_ms(clockid_t clock) {
  timespec now{};
  if (clock_gettime(clock, &now) != 0) return 0.0;
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) * 1e-6;
}

double thread_cpu_time_ms() { return cpu_clock_ms(CLOCK_THREAD_CPUTIME_ID); }

double wait_for_other_work_ms(ThreadClocks first, ThreadClocks second) {
  return std::max(0.0, first.wait_ms - second.cpu_ms) + std::max(0.0, second.wait_ms - first.cpu_ms);
}

CpuAffinity process_cpu_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  CpuAffinity affinity;
  affinity.online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  affinity.count = static_cast<int>(cpus.size());
  // Runs of consecutive CPUs as "a-b".
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!affinity.list.empty()) affinity.list += ',';
    affinity.list += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return affinity;
}

}  // namespace zt
