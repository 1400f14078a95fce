// SIGTERM, SIGINT and SIGUSR1 as a request to stop at the next step boundary rather than mid-step.
//
// A user's Ctrl-C or `kill`, and Slurm's `scancel --signal=TERM`, reach the ranks as SIGINT or
// SIGTERM. SIGUSR1 is the stop a launcher relays: mpirun and srun turn a SIGTERM or SIGINT they
// receive themselves into killing the ranks within a second (mpirun) or at once (srun), but pass
// SIGUSR1 on untouched, so launch/zt-run, launch/auto-resume.sh and launch/slurm.sbatch catch the
// signal and relay SIGUSR1 to the ranks (and exit with the status of the signal they got). The handler only records the signal (async-signal-safe);
// the step loop looks at it once per step, the ranks agree on it (run_guard.h), write a final
// checkpoint and exit. A second stop signal, a second or more after the first, gets the default
// action (the process ends at once), so a user who insists is never stuck behind a slow save;
// copies arriving together (a process group signalled, a launcher relaying) count once, and a
// repeated SIGUSR1 (a relay, which mpirun may deliver twice) never ends it. Once a stop
// is pending, a log line that finds a stderr pipe full waits a bounded time and is then dropped
// (mpirun stops relaying output before it signals the ranks): the checkpoint comes first.
//
// Commands that write one output (an export) install the handler too and call
// throw_if_stop_requested() between pieces of work: the first signal then unwinds the command,
// whose temporary files are removed on the way, and it exits with the shell's status for the
// signal instead of dying with its output half written.
#pragma once

#include <string>

#include "core/error.h"

namespace zt {

// The first stop signal, noticed by throw_if_stop_requested(): its exit status is 128 + signal
// (130 for SIGINT, 143 for SIGTERM, 138 for SIGUSR1).
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

// "SIGTERM", "SIGINT", "SIGUSR1", or "signal N".
std::string stop_signal_name(int signal);

// Installs the handlers for SIGTERM, SIGINT and SIGUSR1; the destructor restores the previous ones.
// One at a time per process.
class StopSignalHandler {
 public:
  StopSignalHandler();
  ~StopSignalHandler();
  StopSignalHandler(const StopSignalHandler&) = delete;
  StopSignalHandler& operator=(const StopSignalHandler&) = delete;

  // The signal received since installation (SIGTERM, SIGINT or SIGUSR1), 0 if none.
  static int received();
};

}  // namespace zt
