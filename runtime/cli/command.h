// A zerotrain subcommand: its name, help texts, options and what it does. The list of all of them
// is in commands.cpp.
#pragma once

#include <boost/program_options.hpp>

#include <iosfwd>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/error.h"

namespace zt::cli {

namespace po = boost::program_options;

// A wrong use of the command line (exit status 2), as opposed to a mistake found while running,
// such as a bad config (zt::UserError, exit status 1).
class UsageError : public UserError {
 public:
  using UserError::UserError;
};

struct Command {
  std::string_view name;     // as typed: "config"
  std::string_view summary;  // one line for `zerotrain --help`
  std::string_view usage;    // synopsis lines for `zerotrain NAME --help`, without "Usage:"
  // Adds the command's options (--help is added for every command).
  void (*declare_options)(po::options_description& options) = nullptr;
  // Names the options that plain arguments fill, in order (none when null: options only).
  void (*declare_positional)(po::positional_options_description& positional) = nullptr;
  // Runs the command on parsed options; throws UsageError or zt::UserError for the user's mistakes.
  int (*run)(const po::variables_map& options, std::ostream& out) = nullptr;
};

// What a failure says to the user: a UserError's message; for a path the system refused (a
// directory gone read-only, a full disk) the path and the system's reason; for memory the machine
// could not give, that; anything else is an internal error. The same words whether one rank
// prints them (run_cli) or the first failing rank of several does before ending the job.
std::string failure_message(const std::exception& error);

// Every subcommand, in the order `zerotrain --help` lists them.
std::span<const Command> all_commands();

}  // namespace zt::cli
