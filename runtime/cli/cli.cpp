#include "runtime/cli/cli.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <new>
#include <ostream>
#include <system_error>
#include <vector>

#include "core/stop_signal.h"
#include "runtime/cli/command.h"
#include "runtime/cli/launcher_env.h"
#include "runtime/config/nearest_name.h"

namespace zt::cli {
namespace {

void write_overview(std::ostream& out) {
  out << "zerotrain " << ZT_VERSION
      << ": data-parallel training with ZeRO-style sharding and communication hidden behind backward\n\n"
      << "Usage: zerotrain COMMAND [OPTIONS]\n\nCommands:\n";
  std::size_t width = 0;
  for (const Command& command : all_commands()) width = std::max(width, command.name.size());
  for (const Command& command : all_commands())
    out << fmt::format("  {:<{}}  {}\n", command.name, width, command.summary);
  out << "\nOptions:\n"
      << "  -h, --help  print this help\n"
      << "  --version   print the version\n\n"
      << "Run 'zerotrain COMMAND --help' for the options of a command.\n";
}

void write_command_help(const Command& command, const po::options_description& options, std::ostream& out) {
  out << "Usage: " << command.usage << "\n\n" << command.summary << ".\n\n" << options;
}

const Command* find_command(std::string_view name) {
  for (const Command& command : all_commands())
    if (command.name == name) return &command;
  return nullptr;
}

std::string unknown_command_message(std::string_view name) {
  std::vector<std::string> names;
  for (const Command& command : all_commands()) names.emplace_back(command.name);
  if (std::optional<std::string> suggestion = nearest_name(name, names))
    return fmt::format("unknown command '{}'; did you mean '{}'?", name, *suggestion);
  return fmt::format("unknown command '{}' (see 'zerotrain --help')", name);
}

std::string unknown_option_message(const Command& command, const po::options_description& options,
                                   const std::string& option) {
  std::vector<std::string> names;
  for (const auto& description : options.options()) names.push_back("--" + description->long_name());
  std::string message = fmt::format("unknown option '{}'", option);
  if (std::optional<std::string> suggestion = nearest_name(option, names))
    message += fmt::format("; did you mean '{}'?", *suggestion);
  return message + fmt::format(" (see 'zerotrain {} --help')", command.name);
}

int run_command(const Command& command, std::span<const std::string> args, std::ostream& out) {
  po::options_description options("Options");
  options.add_options()("help,h", "print this help");
  command.declare_options(options);
  po::positional_options_description positional;
  if (command.declare_positional) command.declare_positional(positional);
  po::variables_map values;
  try {
    // No guessing: a misspelled option is an error, never silently taken for another one.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(std::vector<std::string>(args.begin(), args.end()))
                  .options(options)
                  .positional(positional)
                  .style(style)
                  .run(),
              values);
    if (values.count("help") > 0) {
      write_command_help(command, options, out);
      return kExitSuccess;
    }
    po::notify(values);
  } catch (const po::unknown_option& error) {
    throw UsageError(unknown_option_message(command, options, error.get_option_name()));
  } catch (const po::too_many_positional_options_error&) {
    if (command.declare_positional)
      throw UsageError(fmt::format("too many arguments (see 'zerotrain {} --help')", command.name));
    throw UsageError(fmt::format("unexpected argument: this command takes only options, which start with '-' "
                                 "(see 'zerotrain {} --help')",
                                 command.name));
  } catch (const po::error& error) {
    throw UsageError(fmt::format("{} (see 'zerotrain {} --help')", error.what(), command.name));
  }
  return command.run(values, out);
}

// Runs the command line; `prefix` becomes "zerotrain NAME" once the command is known, for messages.
int dispatch(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::string& prefix) {
  if (args.empty()) {
    write_overview(err);
    return kExitUsage;
  }
  const std::string& first = args.front();
  if (first == "-h" || first == "--help") {
    write_overview(out);
    return kExitSuccess;
  }
  if (first == "--version") {
    out << "zerotrain " << ZT_VERSION << "\n";
    return kExitSuccess;
  }
  if (first.starts_with("-"))
    throw UsageError(fmt::format("unknown option '{}'; options go after the command (see 'zerotrain --help')", first));
  const Command* command = find_command(first);
  if (command == nullptr) throw UsageError(unknown_command_message(first));
  prefix = fmt::format("zerotrain {}", command->name);
  return run_command(*command, args.subspan(1), out);
}

}  // namespace

std::string failure_message(const std::exception& error) {
  if (dynamic_cast<const UserError*>(&error) != nullptr) return error.what();
  if (const auto* fs = dynamic_cast<const std::filesystem::filesystem_error*>(&error))
    return fs->path1().string() + ": " + fs->code().message() +
           (fs->path2().empty() ? std::string() : " (with " + fs->path2().string() + ")");
  if (dynamic_cast<const std::bad_alloc*>(&error) != nullptr)
    return "out of memory: this machine could not give the memory the command needed (a smaller model or batch, or "
           "a machine with more memory)";
  // std::thread's constructor reports EAGAIN: no memory for the thread's stack, or the process
  // limit is reached.
  if (const auto* sys = dynamic_cast<const std::system_error*>(&error);
      sys != nullptr && sys->code() == std::errc::resource_unavailable_try_again)
    return fmt::format(
        "could not start a thread ({}): the memory or the limits this process may use are too low (ulimit -v, "
        "ulimit -u)",
        sys->code().message());
  return std::string("internal error: ") + error.what();
}

int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  std::string prefix = "zerotrain";
  try {
    return dispatch(args, out, err, prefix);
  } catch (const StopRequested& error) {
    err << prefix << ": " << error.what() << "\n";
    return error.exit_code();
  } catch (const UsageError& error) {
    let_rank_zero_report_first();
    err << prefix << ": " << error.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& error) {
    let_rank_zero_report_first();
    err << prefix << ": " << failure_message(error) << "\n";
    return kExitFailure;
  } catch (...) {
    err << prefix << ": internal error: an exception that is not a std::exception\n";
    return kExitFailure;
  }
}

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  return run_cli(args, out, err);
}

}  // namespace zt::cli
