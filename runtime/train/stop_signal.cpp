#include "runtime/train/stop_signal.h"

#include <csignal>
#include <stdexcept>

namespace zt {
namespace {

volatile std::sig_atomic_t g_received = 0;
bool g_installed = false;
struct sigaction g_previous_term {};
struct sigaction g_previous_int {};

extern "C" void record_stop_signal(int signal) {
  if (g_received != 0) {
    // The second request: give up on stopping cleanly. Both calls are async-signal-safe.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_received = signal;
}

}  // namespace

StopSignalHandler::StopSignalHandler() {
  if (g_installed) throw std::logic_error("StopSignalHandler: already installed in this process");
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  // Restart interrupted system calls: the step loop polls the flag, nothing must fail with EINTR.
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, &g_previous_term);
  sigaction(SIGINT, &action, &g_previous_int);
  g_received = 0;
  g_installed = true;
}

StopSignalHandler::~StopSignalHandler() {
  sigaction(SIGTERM, &g_previous_term, nullptr);
  sigaction(SIGINT, &g_previous_int, nullptr);
  g_installed = false;
}

int StopSignalHandler::received() { return g_received; }

}  // namespace zt
