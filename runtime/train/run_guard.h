// The step loop's safety checks, so that a failure ends the job loudly, quickly and on every
// rank at the same step:
//   - at start-up, that all ranks run the same config on the same data (rank_agreement.h), and
//     that checkpoints can be written (checkpoint_dir_check.h);
//   - after each step, that the loss and gradients are finite (nonfinite_guard.h);
//   - after each step, whether any rank got SIGTERM/SIGINT/SIGUSR1 (stop_signal.h): the ranks agree with
//     the step's own all-reduce (StepStats::stop_signal) so they all stop after the same step.
// The checks talk over their own duplicate of the launch communicator, never over the training
// communicator, so they cannot interleave with the engine's collectives.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "comm/mpi_handles.h"
#include "runtime/config/config.h"
#include "runtime/train/checkpoint_dir_lock.h"
#include "runtime/train/nonfinite_guard.h"
#include "runtime/train/resume_choice.h"
#include "core/stop_signal.h"
#include "zero/engine.h"

namespace zt {

struct StopRequest {
  enum class Reason { signal, nonfinite };
  Reason reason;
  std::int64_t step;    // the last step done
  int exit_code;
  std::string message;  // why, for the log
  bool save_checkpoint() const { return reason == Reason::signal; }  // a non-finite state is not worth saving
};

// How long a new run waits for the ranks of an earlier run to end (checkpoint_dir_lock.h): they
// end a second or two after their launcher; far longer, they are not ending by themselves (or a
// crashed node's lock lingers on a network file system), and the run goes on with a warning.
inline constexpr std::chrono::seconds kEarlierRanksWait{60};

class RunGuard {
 public:
  // Collective over `launch_comm`: rank 0 waits up to kEarlierRanksWait for the ranks of an
  // earlier run on checkpoint.dir to end (checkpoint_dir_lock.h), then checks that the ranks agree
  // (throws JobStopped on every rank when they do not). The stop signals' handler is not installed here but by the train command,
  // before anything else (command_train.cpp): a stop requested during start-up counts too.
  RunGuard(const Config& config, MPI_Comm launch_comm);

  // Collective. When checkpoints are on (checkpoint.interval > 0): if any rank cannot write into
  // `dir`, every rank stops now (JobStopped, exit 1) instead of at the first save; rank 0 warns
  // when a checkpoint of about `checkpoint_bytes` does not fit in the free space.
  // Also stops every rank (exit 1) when `dir` is not the same directory on every rank (a file rank
  // 0 creates there is not seen by another rank): checkpoint.dir must be shared; and when another
  // run holds the directory (checkpoint_dir_lock.h), which rank 0 then locks for this run's life.
  void check_checkpoint_dir(const std::filesystem::path& dir, std::uint64_t checkpoint_bytes);
  // Collective. If the planned memory does not fit on any rank (`problem`, from
  // rank_memory_problem), every rank stops now (JobStopped, exit 1), before allocating it.
  void check_memory(const std::optional<std::string>& problem);

  // Collective: rank 0 runs `decide` and broadcasts its choice; every rank checks that it sees the
  // same checkpoint (resume_mismatch). Throws JobStopped (exit 1) on every rank when rank 0 found
  // a reason not to start or any rank sees another checkpoint, naming the ranks.
  ResumeChoice agree_on_resume(const std::function<ResumeChoice()>& decide);

  // The stop signal this rank received (0: none), for the engine's step all-reduce, which tells
  // every rank of any rank's signal (StepStats::stop_signal).
  int local_stop_signal() const;
  // Why the job must stop after `step`, or nothing. Every rank decides alike: it reads only the
  // step's all-reduced statistics.
  std::optional<StopRequest> after_step(std::int64_t step, const StepStats& stats);

  // Logs the stop (rank 0) with what became of the training state (`checkpoint_note`, e.g. "the
  // last good checkpoint is ..." or "a final checkpoint was written to ..."), then throws
  // JobStopped with the request's exit code on every rank.
  [[noreturn]] void stop(const StopRequest& request, const std::string& checkpoint_note) const;

 private:
  MpiComm comm_;
  int rank_ = 0;
  CheckpointDirLock checkpoint_lock_;  // rank 0: held from check_checkpoint_dir to the end
  CheckpointDirLock rank_share_;       // every rank: its share of the ranks lock, from then to the end
  bool checkpoints_on_;
  std::int64_t last_step_;
  NonFiniteGuard nonfinite_;
};

}  // namespace zt
