#include "core/log.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>

namespace zt::log {
namespace {

std::atomic<int> g_rank{0};
std::atomic<Level> g_level{Level::info};
std::atomic<bool> g_progress_all_ranks{false};
std::mutex g_write_mutex;

constexpr std::string_view kLevelNames[] = {"error", "warn", "info", "debug"};

// How long a line waits for a stderr that takes nothing (non-blocking, as a stopping job makes it:
// runtime/train/stop_signal.cpp) before it is dropped.
constexpr int kStalledReaderMs = 200;

void write_line(std::string_view line) {
  while (!line.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    if (n > 0) {
      line.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd writable{STDERR_FILENO, POLLOUT, 0};
      if (::poll(&writable, 1, kStalledReaderMs) <= 0) return;
    } else {
      return;  // the reader is gone: the line is lost, not the process
    }
  }
}

void emit(std::string_view tag, std::string_view message) {
  // One write per line under a mutex, so lines from the comm thread and the main thread never mix.
  std::string line = fmt::format("[zt rank {} {}] {}\n", g_rank.load(), tag, message);
  std::lock_guard lock(g_write_mutex);
  std::fflush(stderr);  // anything written through stdio first keeps its place
  write_line(line);
}

}  // namespace

void set_rank(int rank) { g_rank = rank; }
void set_level(Level level) { g_level = level; }
void set_progress_on_all_ranks(bool all_ranks) { g_progress_all_ranks = all_ranks; }
Level level() { return g_level; }
int rank() { return g_rank; }

Level parse_level(std::string_view name) {
  for (int i = 0; i < 4; ++i)
    if (kLevelNames[i] == name) return static_cast<Level>(i);
  throw std::invalid_argument("unknown log level '" + std::string(name) + "' (expected error, warn, info or debug)");
}

void write(Level level, std::string_view message) { emit(kLevelNames[static_cast<int>(level)], message); }

void write_progress(std::string_view message) {
  if (g_rank == 0 || g_progress_all_ranks) emit("info", message);
}

}  // namespace zt::log
