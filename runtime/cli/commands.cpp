// The registry of subcommands. To add one, write command_<name>.cpp defining
// `Command <name>_command()` (CMakeLists.txt picks up every command_*.cpp), then declare it below
// and add it to the list.
#include <vector>

#include "runtime/cli/command.h"

namespace zt::cli {

Command train_command();
Command plan_command();
Command config_command();
Command prepare_data_command();
Command bench_comm_command();
Command bench_gemm_command();
Command export_command();
Command eval_command();
Command sample_command();
Command plot_command();

std::span<const Command> all_commands() {
  static const std::vector<Command> commands = {
      train_command(),
      plan_command(),
      config_command(),
      prepare_data_command(),
      bench_comm_command(),
      bench_gemm_command(),
      export_command(),
      eval_command(),
      sample_command(),
      plot_command(),
  };
  return commands;
}

}  // namespace zt::cli
