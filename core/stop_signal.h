// SIGTERM and SIGINT as a request to stop at the next step boundary rather than mid-step.
//
// Slurm sends SIGTERM to every task some time before the time limit (--signal=TERM@120), and a
// user's Ctrl-C or `kill` does the same. The handler only records the signal (async-signal-safe);
// the step loop looks at it once per step, the ranks agree on it (run_guard.h), write a final
// checkpoint and exit. A second stop signal while the first is pending gets the default action
// (the process ends at once), so a user who insists is never stuck behind a slow save. Once a stop
// is pending, a log line that finds a stderr pipe full waits a bounded time and is then dropped
// (mpirun stops relaying output before it signals the ranks): the checkpoint comes first.
//
// Commands that write one output (an export) install the handler too and call
// throw_if_stop_requested() between pieces of work: the first signal then unwinds the command,
// whose temporary files are removed on the way, and it exits with the shell's status for the
// signal instead of dying with its output half written.
#pragma once

#include "core/error.h"

namespace zt {

// The first stop signal, noticed by throw_if_stop_requested(): its exit status is 128 + signal
// (130 for SIGINT, 143 for SIGTERM).
class StopRequested : public UserError {
 public:
  explicit StopRequested(int signal);
  int signal() const { return signal_; }
  int exit_code() const { return 128 + signal_; }

 private:
  int signal_;
};

// Throws StopRequested if a stop signal arrived since the handler was installed.
void throw_if_stop_requested();

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
