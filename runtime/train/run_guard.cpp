#include "runtime/train/run_guard.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdlib.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/log.h"
#include "comm/mpi_check.h"
#include "runtime/train/checkpoint_dir_check.h"
#include "runtime/train/job_stopped.h"
#include "runtime/train/rank_agreement.h"

namespace zt {
namespace {

// rank 0's text on every rank (two broadcasts: the length, then the bytes).
std::string broadcast_text(MPI_Comm comm, std::string text) {
  auto length = static_cast<long long>(text.size());
  ZT_MPI_CHECK(MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, comm));
  text.resize(static_cast<std::size_t>(length));
  ZT_MPI_CHECK(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, comm));
  return text;
}

// The ranks (in order) that flag `mine`, on every rank.
std::vector<int> ranks_flagging(MPI_Comm comm, bool mine) {
  int world = 1;
  ZT_MPI_CHECK(MPI_Comm_size(comm, &world));
  int flag = mine ? 1 : 0;
  std::vector<int> flags(static_cast<std::size_t>(world));
  ZT_MPI_CHECK(MPI_Allgather(&flag, 1, MPI_INT, flags.data(), 1, MPI_INT, comm));
  std::vector<int> ranks;
  for (int r = 0; r < world; ++r)
    if (flags[static_cast<std::size_t>(r)] != 0) ranks.push_back(r);
  return ranks;
}

}  // namespace

RunGuard::RunGuard(const Config& config, MPI_Comm launch_comm)
    : comm_(MpiComm::duplicate(launch_comm)),
      checkpoints_on_(config.checkpoint.interval > 0),
      last_step_(config.train.steps),
      nonfinite_(config.train.on_nonfinite, config.train.max_consecutive_nonfinite,
                 config.precision.dtype == DType::f16) {
  ZT_MPI_CHECK(MPI_Comm_rank(comm_.get(), &rank_));
  // Before anything reads checkpoint.dir (the agreement looks for the checkpoint to resume).
  if (rank_ == 0 && checkpoints_on_) CheckpointDirLock::wait_for_earlier_ranks(checkpoint_root(config), kEarlierRanksWait);
  ZT_MPI_CHECK(MPI_Barrier(comm_.get()));
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
  // One directory for all ranks: each rank writes its own shard files into the checkpoint rank 0
  // creates, so a directory local to each node fails at the first save, or resumes apart.
  std::string probe;
  if (rank_ == 0) {
    probe = (dir / ".shared_probe.XXXXXX").string();
    const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    else probe.clear();  // writable a moment ago: nothing to compare, the save will say what is wrong
  }
  probe = broadcast_text(comm_.get(), probe);
  const bool unseen = !probe.empty() && ::access(probe.c_str(), F_OK) != 0;
  const std::vector<int> apart = ranks_flagging(comm_.get(), unseen);
  if (rank_ == 0 && !probe.empty()) ::unlink(probe.c_str());
  if (!apart.empty()) {
    const std::string message =
        fmt::format("checkpoint.dir {} is not the same directory on every rank: rank(s) {} do not see the file rank 0 "
                    "created in it; checkpoint.dir must be on a filesystem shared by all nodes (NFS, Lustre, ...)",
                    dir.string(), fmt::join(apart, ", "));
    if (rank_ == 0) log::error("{}", message);
    throw JobStopped(kExitCheckpointDirUnusable, message);
  }
  // The free space as the user left it, before the lock file takes its block.
  if (rank_ == 0)
    if (std::optional<std::string> warning = checkpoint_space_warning(dir, checkpoint_bytes))
      log::warn("checkpoint.dir: {}", *warning);
  // Rank 0 holds the directory's lock for the run's life, every rank its share of the ranks lock
  // (checkpoint_dir_lock.h).
  std::string locked_by;
  if (rank_ == 0) checkpoint_lock_ = CheckpointDirLock::take(dir, locked_by);
  locked_by = broadcast_text(comm_.get(), locked_by);
  if (!locked_by.empty()) {
    const std::string message = fmt::format("checkpoint.dir: {}", locked_by);
    if (rank_ == 0) log::error("{}", message);
    throw JobStopped(kExitCheckpointDirUnusable, message);
  }
  std::string share_problem;
  rank_share_ = CheckpointDirLock::take_rank_share(dir, share_problem);
  if (!share_problem.empty()) log::warn("checkpoint.dir: {}; a restart will not wait for this rank", share_problem);
}

ResumeChoice RunGuard::agree_on_resume(const std::function<ResumeChoice()>& decide) {
  std::string text;
  if (rank_ == 0) text = resume_choice_to_json(decide()).dump();
  const ResumeChoice choice = resume_choice_from_json(nlohmann::json::parse(broadcast_text(comm_.get(), text)));
  if (!choice.problem.empty()) {
    if (rank_ == 0) log::error("{}", choice.problem);
    throw JobStopped(kExitCheckpointDirUnusable, choice.problem);
  }
  const std::optional<std::string> mismatch = resume_mismatch(choice);
  if (mismatch) log::error("{}", *mismatch);  // on the rank that has it: it names what this rank sees
  const std::vector<int> differing = ranks_flagging(comm_.get(), mismatch.has_value());
  if (!differing.empty()) {
    const std::string message = fmt::format(
        "rank(s) {} do not see the checkpoint rank 0 resumes from ({}, step {}; see their errors): checkpoint.dir must "
        "be one directory shared by all ranks (the same filesystem on every node); stopping before the first step",
        fmt::join(differing, ", "), choice.from->string(), choice.step);
    if (rank_ == 0) log::error("{}", message);
    throw JobStopped(kExitCheckpointDirUnusable, message);
  }
  return choice;
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
                       fmt::format("{} received{}: stopping after step {}", stop_signal_name(signal),
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
