#include "runtime/cli/config_options.h"

#include <string>
#include <vector>

namespace zt::cli {

void declare_config_options(po::options_description& options, bool required) {
  auto* file = po::value<std::string>()->value_name("FILE");
  if (required) file->required();
  options.add_options()("config,c", file, "experiment config (YAML)")(
      "set", po::value<std::vector<std::string>>()->value_name("KEY=VALUE")->composing(),
      "override one config key after the file is read, e.g. --set zero_optimization.stage=3; the value is YAML "
      "and is checked like one in the file; repeatable");
}

bool has_config_options(const po::variables_map& options) {
  return options.count("config") > 0 || options.count("set") > 0;
}

Config load_config_options(const po::variables_map& options) {
  if (!options.count("config")) throw UsageError("the option '--config' is required");
  std::vector<std::string> overrides;
  if (options.count("set")) overrides = options["set"].as<std::vector<std::string>>();
  return load_config(options["config"].as<std::string>(), overrides);
}

}  // namespace zt::cli
