#include "runtime/train/run_guard.h"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "comm/comm_options.h"
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
      timeout_(static_cast<std::int64_t>(config.comm.timeout_s * 1000.0)),
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

int RunGuard::signal_on_any_rank() {
  const int mine = StopSignalHandler::received();
  int any = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  ZT_MPI_CHECK(MPI_Iallreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm_.get(), &request));
  // Poll rather than block, so that a peer that died cannot hang this rank here: the same
  // timeout and exit status as the comm watchdog.
  const auto start = std::chrono::steady_clock::now();
  for (int done = 0;;) {
    ZT_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return any;
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > timeout_) {
      log::error("comm timeout: the per-step stop-signal all-reduce has not completed after {:.1f} s (comm.timeout "
                 "{:.1f} s); a peer rank may have died; ending this process with exit code {}",
                 std::chrono::duration<double>(waited).count(), timeout_.count() / 1000.0, kCommTimeoutExitCode);
      std::fflush(nullptr);
      std::_Exit(kCommTimeoutExitCode);
    }
    if (waited > std::chrono::milliseconds(1)) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

std::optional<StopRequest> RunGuard::after_step(std::int64_t step, const StepStats& stats) {
  // Every rank computes the same verdict from the same (all-reduced) statistics.
  if (std::optional<std::string> why = nonfinite_.check(step, stats))
    return StopRequest{StopRequest::Reason::nonfinite, step, kExitNonFiniteLoss, std::move(*why)};
  // At the last step the job ends (and saves) anyway: a late signal changes nothing, and the
  // job should report success. Every rank has the same last step, so all skip the all-reduce.
  if (step >= last_step_) return std::nullopt;
  if (const int signal = signal_on_any_rank()) {
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
