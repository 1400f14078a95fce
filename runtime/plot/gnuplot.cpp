#include "runtime/plot/gnuplot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"

extern char** environ;

namespace zt::plot {
namespace {

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<std::filesystem::path> find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    std::filesystem::path candidate = std::filesystem::path(dirs.substr(0, colon)) / "gnuplot";
    if (!candidate.parent_path().empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
  }
  return std::nullopt;
}

void run_gnuplot(const std::filesystem::path& script) {
  std::optional<std::filesystem::path> gnuplot = find_gnuplot();
  if (!gnuplot)
    throw UserError("plot needs gnuplot, which is not on PATH: install it with 'apt-get install gnuplot-nox' "
                    "(scripts/setup.sh does)");
  // gnuplot's complaints go to a file beside the script, to quote them if it fails.
  const std::filesystem::path errors = script.parent_path() / "gnuplot.stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  // gnuplot runs in the script's directory and the script names its files relative to it, so no
  // path the user chose ever becomes script text.
  posix_spawn_file_actions_addchdir_np(&actions, script.parent_path().c_str());
  std::string program = gnuplot->string();
  std::string script_arg = script.filename().string();
  std::vector<char*> argv = {program.data(), script_arg.data(), nullptr};
  pid_t pid = 0;
  const int spawn_error = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) throw UserError(fmt::format("cannot start {}: {}", program, std::strerror(spawn_error)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw UserError(fmt::format("waiting for {} failed: {}", program, std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw UserError(fmt::format("gnuplot failed ({}): {}",
                                WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status)) : "killed",
                                read_text(errors)));
}

std::string gnuplot_quote(std::string_view s) {
  std::string quoted = "'";
  for (char c : s) {
    // A line break would end the string and the command: what follows would run as gnuplot input
    // (`!cmd` runs a shell). Control characters have no business in a label anyway.
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = '?';
    quoted += c;
    if (c == '\'') quoted += '\'';
  }
  return quoted + "'";
}

}  // namespace zt::plot
