// `zerotrain config`: prints the fully resolved config (file + --set overrides + defaults), so a user
// can see exactly what a run would use, or the reference of every key.
#include <ostream>
#include <string>
#include <vector>

#include "runtime/cli/command.h"
#include "runtime/config/config.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  options.add_options()
      ("config,c", po::value<std::string>()->value_name("FILE"), "experiment config (YAML) to resolve")
      ("set", po::value<std::vector<std::string>>()->value_name("KEY=VALUE")->composing(),
       "override one key after the file is read, e.g. --set zero_optimization.stage=3; the value is YAML; "
       "repeatable")
      ("reference", po::bool_switch(), "print the Markdown reference of every config key (docs/config.md) instead");
}

int run(const po::variables_map& options, std::ostream& out) {
  const bool has_config = options.count("config") > 0;
  const bool has_overrides = options.count("set") > 0;
  if (options["reference"].as<bool>()) {
    if (has_config || has_overrides) throw UsageError("--reference takes no --config or --set");
    out << config_reference_markdown();
    return 0;
  }
  if (!has_config) throw UsageError("the option '--config' is required (or --reference)");
  std::vector<std::string> overrides;
  if (has_overrides) overrides = options["set"].as<std::vector<std::string>>();
  out << config_to_yaml(load_config(options["config"].as<std::string>(), overrides));
  return 0;
}

}  // namespace

Command config_command() {
  return {
      .name = "config",
      .summary = "Print the resolved experiment config, or the reference of every config key",
      .usage = "zerotrain config --config FILE [--set KEY=VALUE]...\n"
               "       zerotrain config --reference",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
