// `zerotrain config`: prints the fully resolved config (file + --set overrides + defaults), so a user
// can see exactly what a run would use, or the reference of every key.
#include <ostream>
#include <string>
#include <vector>

#include "runtime/cli/command.h"
#include "runtime/cli/config_options.h"
#include "runtime/config/config.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  declare_config_options(options, /*required=*/false);
  options.add_options()("reference", po::bool_switch(),
                        "print the Markdown reference of every config key (docs/config.md) instead");
}

int run(const po::variables_map& options, std::ostream& out) {
  if (options["reference"].as<bool>()) {
    if (has_config_options(options)) throw UsageError("--reference takes no --config or --set");
    out << config_reference_markdown();
    return 0;
  }
  if (!options.count("config") && !options.count("deepspeed"))
    throw UsageError("the option '--config' is required (or --reference)");
  out << config_to_yaml(load_config_options(options));
  return 0;
}

}  // namespace

Command config_command() {
  return {
      .name = "config",
      .summary = "Print the resolved experiment config, or the reference of every config key",
      .usage = "zerotrain config --config FILE [--deepspeed ds_config.json] [--set KEY=VALUE]...\n"
               "       zerotrain config --reference",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
