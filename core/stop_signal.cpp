#include "core/stop_signal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <csignal>
#include <ctime>
#include <stdexcept>

namespace zt {
namespace {

volatile std::sig_atomic_t g_received = 0;
volatile std::sig_atomic_t g_stderr_flags = -1;  // stderr's flags before the stop made it non-blocking
bool g_installed = false;
struct sigaction g_previous_term {};
struct sigaction g_previous_int {};
struct sigaction g_previous_usr1 {};

// Monotonic nanoseconds; clock_gettime is async-signal-safe.
long long monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}
volatile long long g_received_at_ns = 0;

extern "C" void record_stop_signal(int signal) {
  if (g_received != 0) {
    // Copies of one request arrive together (a Ctrl-C or `timeout` signals a whole process group,
    // a launcher relays it too): they count once. SIGUSR1 never insists: it is the launchers'
    // relay, which mpirun may deliver more than once (they insist with SIGTERM).
    if (signal == SIGUSR1 || monotonic_ns() - g_received_at_ns < 1'000'000'000) return;
    // The second request: give up on stopping cleanly. Both calls are async-signal-safe.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  // The time first: a handler running at the same moment on another thread that finds the signal
  // set also finds its time (the mask below keeps this one from being interrupted by the others).
  g_received_at_ns = monotonic_ns();
  g_received = signal;
  // mpirun, sent SIGTERM, stops relaying the ranks' output, signals them a second later and kills
  // them a second after that: a rank whose log write blocks on the full pipe would never reach its
  // final checkpoint. From now on the log waits a bounded time for a reader (core/log.cpp), then
  // drops the line. Only for a pipe or socket (a terminal drains itself); fstat and fcntl are
  // async-signal-safe.
  struct stat target {};
  if (fstat(STDERR_FILENO, &target) != 0 || !(S_ISFIFO(target.st_mode) || S_ISSOCK(target.st_mode))) return;
  const int flags = fcntl(STDERR_FILENO, F_GETFL);
  if (flags < 0 || fcntl(STDERR_FILENO, F_SETFL, flags | O_NONBLOCK) != 0) return;
  g_stderr_flags = flags;
}

}  // namespace

StopSignalHandler::StopSignalHandler() {
  if (g_installed) throw std::logic_error("StopSignalHandler: already installed in this process");
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  for (const int blocked : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&action.sa_mask, blocked);
  // Restart interrupted system calls: the step loop polls the flag, nothing must fail with EINTR.
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, &g_previous_term);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGUSR1, &action, &g_previous_usr1);
  g_received = 0;
  g_installed = true;
}

StopSignalHandler::~StopSignalHandler() {
  sigaction(SIGTERM, &g_previous_term, nullptr);
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGUSR1, &g_previous_usr1, nullptr);
  // The pipe may be shared with the processes after this one (a shell's `2>&1 | tee`).
  if (g_stderr_flags >= 0) fcntl(STDERR_FILENO, F_SETFL, static_cast<int>(g_stderr_flags));
  g_stderr_flags = -1;
  g_received = 0;  // no stop pending without a handler (the watchdog asks too)
  g_installed = false;
}

int StopSignalHandler::received() { return g_received; }

std::string stop_signal_name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    default: return fmt::format("signal {}", signal);
  }
}

StopRequested::StopRequested(int signal)
    : UserError(fmt::format("stopped by {} before the end; what was being written was removed", stop_signal_name(signal))),
      signal_(signal) {}

void throw_if_stop_requested() {
  if (const int signal = StopSignalHandler::received()) throw StopRequested(signal);
}

}  // namespace zt
