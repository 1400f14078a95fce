// Rank-prefixed logging with fmt.
//
// Every line starts with "[zt rank R LEVEL]". error/warn/info/debug lines print on every rank
// (when at or above the level); progress lines print on rank 0 only, unless all ranks are asked
// for, so an N-rank job does not print every progress line N times.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace zt::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

void set_rank(int rank);
void set_level(Level level);
void set_progress_on_all_ranks(bool all_ranks);
Level parse_level(std::string_view name);  // "error", "warn", "info", "debug"; throws otherwise
Level level();
int rank();

void write(Level level, std::string_view message);
void write_progress(std::string_view message);

template <typename... Args> void error(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::error, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args> void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::warn) write(Level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args> void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::info) write(Level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args> void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::debug) write(Level::debug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args> void progress(fmt::format_string<Args...> f, Args&&... args) {
  write_progress(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace zt::log
