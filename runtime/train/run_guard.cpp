#include "runtime/train/run_guard.h"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/core/log.h"
#include "runtime/core/mpi_check.h"
#include "runtime/train/checkpoint_dir_check.h"
#include "runtime/train/job_stopped.h"
#include "runtime/train/rank_agreement.h"

namespace zt {
namespace {

const char* signal_name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
  }
}

}  // namespace

RunGuard::RunGuard(const Config& config, MPI_Comm launch_comm)
    : comm_(MpiComm::duplicate(launch_comm)),
      checkpoints_on_(config.checkpoint.interval > 0),
      last_step_(config.train.steps),
      nonfinite_(config.train.on_nonfinite, config.train.max_consecutive_nonfinite,
                 config.precision.dtype == DType::f16) {
  ZT_MPI_CHECK(MPI_Comm_rank(comm_.get(), &rank_));
  check_ranks_agree(comm_.get(), config);
}

void RunGuard::check_checkpoint_dir(const std::filesystem::path& dir, std::uint64_t checkpoint_bytes) {
  if (!checkpoints_on_) return;
  const std::optional<std::string> problem = checkpoint_dir_problem(dir, rank_);
  if (problem) log::error("checkpoint.dir: {}", *problem);  // on the rank that has it: paths differ by node
  int failed = problem ? 1 : 0, failed_ranks = 0;
  ZT_MPI_CHECK(MPI_Allreduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, comm_.get()));
  if (failed_ranks > 0) {
    const std::string message =
        fmt::format("checkpoints cannot be written to {} on {} rank(s) (see their errors); stopping before the first "
                    "step rather than at the first save; fix checkpoint.dir, or set checkpoint.interval: 0 to train "
                    "without checkpoints",
                    dir.string(), failed_ranks);
    if (rank_ == 0) log::error("{}", message);
    throw JobStopped(kExitCheckpointDirUnusable, message);
  }
  if (rank_ != 0) return;
  if (std::optional<std::string> warning = checkpoint_space_warning(dir, checkpoint_bytes))
    log::warn("checkpoint.dir: {}", *warning);
}

void RunGuard::check_memory(const std::optional<std::string>& problem) {
  if (problem) log::error("{}", *problem);  // on the rank that has it: machines differ
  int failed = problem ? 1 : 0, failed_ranks = 0;
  ZT_MPI_CHECK(MPI_Allreduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, comm_.get()));
  if (failed_ranks == 0) return;
  const std::string message = fmt::format(
      "the planned memory does not fit on {} rank(s) (see their errors); stopping before allocating it", failed_ranks);
  if (rank_ == 0) log::error("{}", message);
  throw JobStopped(kExitOutOfMemory, message);
}

int RunGuard::local_stop_signal() const { return StopSignalHandler::received(); }

std::optional<StopRequest> RunGuard::after_step(std::int64_t step, const StepStats& stats) {
  // Every rank computes the same verdict from the same (all-reduced) statistics.
  if (std::optional<std::string> why = nonfinite_.check(step, stats))
    return StopRequest{StopRequest::Reason::nonfinite, step, kExitNonFiniteLoss, std::move(*why)};
  // At the last step the job ends (and saves) anyway: a late signal changes nothing, and the
  // job should report success.
  if (step >= last_step_) return std::nullopt;
  if (const int signal = stats.stop_signal) {
    const bool here = StopSignalHandler::received() != 0;
    return StopRequest{StopRequest::Reason::signal, step, exit_status_for_signal(signal),
                       fmt::format("{} received{}: stopping after step {}", signal_name(signal),
                                   here ? "" : " by another rank", step)};
  }
  return std::nullopt;
}

void RunGuard::stop(const StopRequest& request, const std::string& checkpoint_note) const {
  const std::string message = fmt::format("{}; {}; exit status {}", request.message, checkpoint_note, request.exit_code);
  if (rank_ == 0) {
    if (request.reason == StopRequest::Reason::signal)
      log::warn("{}", message);
    else
      log::error("{}", message);
  }
  std::fflush(nullptr);
  throw JobStopped(request.exit_code, message);
}

}  // namespace zt
