// The --config FILE and --set KEY=VALUE options of every command that reads an experiment config,
// declared and read in one place so they mean the same everywhere.
#pragma once

#include "runtime/cli/command.h"
#include "runtime/config/config.h"

namespace zt::cli {

// required: whether --config must be given (`config --reference` takes none).
void declare_config_options(po::options_description& options, bool required = true);
bool has_config_options(const po::variables_map& options);
// The config file with the --set overrides applied, checked.
Config load_config_options(const po::variables_map& options);

}  // namespace zt::cli
