// `zerotrain eval`: a checkpoint's loss and perplexity over a whole token dataset, on any number
// of ranks (mpirun -np N zerotrain eval ...).
#include <mpi.h>

#include <fmt/format.h>

#include <cstdio>
#include <ostream>
#include <string>

#include "comm/mpi_bootstrap.h"
#include "runtime/cli/command.h"
#include "runtime/cli/launcher_env.h"
#include "runtime/cli/numeric_option.h"
#include "core/log.h"
#include "runtime/train/checkpoint_eval.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  options.add_options()
      ("checkpoint", po::value<std::string>()->value_name("DIR")->required(), "a complete checkpoint directory")
      ("data", po::value<std::string>()->value_name("GLOB"),
       "token shards to score (default: the run's data.val_files, or its train_files when it had none)")
      ("batches", po::value<std::int64_t>()->value_name("N")->default_value(0),
       "score only the first N global batches (default 0: the whole dataset)")
      ("batch-size", po::value<std::int64_t>()->value_name("B")->default_value(0),
       "sequences per rank per batch (default: the run's train_micro_batch_size_per_gpu)");
}

int run(const po::variables_map& options, std::ostream& out) {
  EvalOptions eval;
  eval.checkpoint = options["checkpoint"].as<std::string>();
  if (options.count("data")) eval.data = options["data"].as<std::string>();
  // 0: all batches / the run's micro batch. The batch size has train_micro_batch_size_per_gpu's range.
  eval.batches = option_in<std::int64_t>(options, "batches", 0, std::int64_t{1} << 40);
  eval.batch_size = option_in<std::int64_t>(options, "batch-size", 0, 1 << 20);
  MpiSession mpi(nullptr, nullptr);
  int world = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    const EvalResult r = evaluate_checkpoint(eval);
    if (rank == 0)
      out << fmt::format("eval {} on {}: loss {:.6f} | perplexity {:.4f} | {} batches, {} tokens scored of {} "
                         "windows, {} rank(s)\n",
                         eval.checkpoint.string(), r.data, r.loss, r.perplexity, r.batches, r.tokens,
                         r.dataset_windows, world);
  } catch (const std::exception& e) {
    if (world == 1) throw;
    let_rank_zero_report_first();
    log::error("{}", failure_message(e));  // other ranks may wait in a collective: end the whole job
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}

}  // namespace

Command eval_command() {
  return {
      .name = "eval",
      .summary = "Loss and perplexity of a checkpoint over a token dataset (any number of ranks)",
      .usage = "zerotrain eval --checkpoint DIR [--data GLOB] [--batches N]\n"
               "       mpirun -np N zerotrain eval --checkpoint DIR",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
