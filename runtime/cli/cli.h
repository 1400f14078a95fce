// The `zerotrain` command line: subcommand dispatch, option parsing and error reporting, as a
// library so that tests run it in-process; main.cpp only forwards to it.
#pragma once

#include <iosfwd>
#include <span>
#include <string>

namespace zt::cli {

// Exit statuses of zerotrain.
inline constexpr int kExitSuccess = 0;
inline constexpr int kExitFailure = 1;  // a bad config, data or checkpoint, or an internal error
inline constexpr int kExitUsage = 2;    // a wrong command line: unknown command or option, missing value

// Runs zerotrain with `args` (the arguments after the program name) and returns the exit status.
// Normal output goes to `out`; help asked for goes to `out`; errors go to `err`.
int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err);

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace zt::cli
