// SIGTERM and SIGINT as a request to stop at the next step boundary rather than mid-step.
//
// Slurm sends SIGTERM to every task some time before the time limit (--signal=TERM@120), and a
// user's Ctrl-C or `kill` does the same. The handler only records the signal (async-signal-safe);
// the step loop looks at it once per step, the ranks agree on it (run_guard.h), write a final
// checkpoint and exit. A second stop signal while the first is pending gets the default action
// (the process ends at once), so a user who insists is never stuck behind a slow save. Once a stop
// is pending, a log line that finds a stderr pipe full waits a bounded time and is then dropped
// (mpirun stops relaying output before it signals the ranks): the checkpoint comes first.
#pragma once

namespace zt {

// Installs the handlers for SIGTERM and SIGINT; the destructor restores the previous ones.
// One at a time per process.
class StopSignalHandler {
 public:
  StopSignalHandler();
  ~StopSignalHandler();
  StopSignalHandler(const StopSignalHandler&) = delete;
  StopSignalHandler& operator=(const StopSignalHandler&) = delete;

  // The signal received since installation (SIGTERM or SIGINT), 0 if none.
  static int received();
};

}  // namespace zt
