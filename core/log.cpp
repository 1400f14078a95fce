#include "core/log.h"

#include <atomic>
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

void emit(std::string_view tag, std::string_view message) {
  // One fwrite per line under a mutex, so lines from the comm thread and the main thread never mix.
  std::string line = fmt::format("[zt rank {} {}] {}\n", g_rank.load(), tag, message);
  std::lock_guard lock(g_write_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
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
