// How long a thread was ready to run but had no CPU: the cost of sharing a core with another
// process (or with too many of our own threads), which neither wall time nor CPU time shows.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <optional>
#include <string>

namespace zt {

// The calling thread's total run-queue wait since it started, in ms: time it was runnable while
// the kernel ran something else on the CPUs it may use (Linux's /proc/thread-self/schedstat,
// second field). nullopt where the kernel does not publish it (built without CONFIG_SCHED_INFO,
// no /proc).
std::optional<double> thread_run_queue_wait_ms();
// The same for thread `tid` of this process (current_thread_id() as that thread saw it).
std::optional<double> thread_run_queue_wait_ms(pid_t tid);
// The calling thread's kernel id (gettid).
pid_t current_thread_id();
// A CPU-time clock's reading in ms (0 when it cannot be read), and the calling thread's.
double cpu_clock_ms(clockid_t clock);
double thread_cpu_time_ms();

// What a thread's clocks advanced by over an interval.
struct ThreadClocks {
  double wait_ms = 0.0;  // ready to run, without a CPU
  double cpu_ms = 0.0;   // running
};
// The part of two threads' run-queue waits that other work caused, when the two may share a core
// (a rank's compute and comm threads bound to one): each thread's wait less the other's CPU time,
// which it may have spent waiting for, clamped at 0. A lower bound of what other processes (or
// other ranks on the same cores) took from the pair.
double wait_for_other_work_ms(ThreadClocks first, ThreadClocks second);

// The CPUs the calling thread may run on (sched_getaffinity; a process's threads inherit its
// binding): how many, as a list like "0" or "0-3,8", and how many the machine has online.
struct CpuAffinity {
  int count = 0;
  std::string list;
  int online_cpus = 0;
};
CpuAffinity process_cpu_affinity();

}  // namespace zt
