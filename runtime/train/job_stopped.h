// JobStopped: the job ends before its last step, on purpose and on every rank at the same point.
//
// The run guard (run_guard.h) throws it after the ranks agreed to stop — they disagree at
// start-up, the loss became non-finite, a stop signal arrived — and after it logged why. Because
// no rank is left inside a collective, `zerotrain train` can finalise MPI and exit with
// exit_code() instead of tearing the job down with MPI_Abort.
#pragma once

#include <string>

#include "core/error.h"

namespace zt {

// Exit statuses of a job that stopped on purpose (see README "Reliability").
inline constexpr int kExitRanksDisagree = 1;   // like any bad config or data: restarting cannot help
inline constexpr int kExitCheckpointDirUnusable = 1;  // checkpoint.dir cannot be written (read-only, no permission)
inline constexpr int kExitOutOfMemory = 1;  // the planned memory does not fit (a bigger machine or config change helps)
inline constexpr int kExitNonFiniteLoss = 4;   // the training diverged (train.on_nonfinite)
inline int exit_status_for_signal(int signal) { return 128 + signal; }  // the shell's convention: 143 for SIGTERM

class JobStopped : public UserError {
 public:
  JobStopped(int exit_code, const std::string& message) : UserError(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace zt
