// `zerotrain train`: runs a training job on every rank that mpirun/srun started (or alone).
#include <mpi.h>

#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "comm/mpi_bootstrap.h"
#include "runtime/cli/command.h"
#include "runtime/cli/launcher_env.h"
#include "runtime/cli/config_options.h"
#include "runtime/config/config.h"
#include "core/log.h"
#include "core/stop_signal.h"
#include "runtime/trace/step_range.h"
#include "runtime/train/job_stopped.h"
#include "runtime/train/resume_choice.h"
#include "runtime/train/trainer.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  declare_config_options(options);
  options.add_options()
      ("resume", po::value<std::string>()->value_name("auto|PATH|none"),
       "continue from a checkpoint: auto = the newest complete one in checkpoint.dir (overrides checkpoint.resume)")
      ("trace", po::value<std::string>()->value_name("STEPS"),
       "record a timeline of steps STEPS (e.g. 3:5, or 4) into <run_dir>/trace/rank<R>.json, for Perfetto or "
       "chrome://tracing");
}

int run(const po::variables_map& options, std::ostream&) {
  // From the start: a stop requested while the job starts up (a launcher relaying a time-limit
  // warning, a Ctrl-C) is not the signal's default action, which would end the rank with nothing
  // saved; the job stops after its first step with a checkpoint (run_guard.h).
  StopSignalHandler stop_signals;
  // Every rank reads and checks the config before MPI starts, so a mistake in it is reported the
  // same way (and once per rank at worst) without any rank waiting on another.
  Config config = load_config_options(options);
  if (options.count("resume")) config.checkpoint.resume = options["resume"].as<std::string>();
  config = with_model_shape_of_resumed_checkpoint(std::move(config));
  std::optional<trace::StepRange> trace_steps;
  if (options.count("trace")) {
    try {
      trace_steps = trace::parse_step_range(options["trace"].as<std::string>());
    } catch (const UserError& e) {
      throw UsageError(e.what());  // a command-line mistake: exit status 2
    }
  }
  MpiSession mpi(nullptr, nullptr);
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  try {
    Trainer trainer(config, MPI_COMM_WORLD);
    if (trace_steps) trainer.trace_steps(*trace_steps);
    trainer.run();
  } catch (const JobStopped& e) {
    // Every rank stopped at the same point and the reason is logged: finalise MPI and exit with
    // the status that says why (job_stopped.h), no MPI_Abort.
    return e.exit_code();
  } catch (const std::exception& e) {
    if (world == 1) throw;
    // Other ranks may be inside a collective this rank will never join: end the whole job now
    // rather than leave them to the comm timeout.
    let_rank_zero_report_first();
    log::error("{}", failure_message(e));
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}

}  // namespace

Command train_command() {
  return {
      .name = "train",
      .summary = "Train a model from a YAML experiment config (one process per GPU or CPU rank)",
      .usage = "zerotrain train --config FILE [--set KEY=VALUE]... [--trace STEPS]\n"
               "       mpirun -np N zerotrain train --config FILE",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
