// Numeric command-line options checked as the config checks its keys: within a stated range and,
// for real numbers, finite. NaN, a value that would wrap when narrowed, or one out of range is a
// usage error naming the option, the value and the range, before the command does anything.
#pragma once

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include <concepts>
#include <string>

#include "runtime/cli/command.h"

namespace zt::cli {

template <typename T>
  requires std::integral<T> || std::floating_point<T>
T option_in(const boost::program_options::variables_map& options, const char* name, T lo, T hi) {
  const T value = options[name].as<T>();
  if (!(value >= lo && value <= hi))  // false for NaN too
    throw UsageError(fmt::format("--{} {}: expected {} in {}..{}", name, value,
                                 std::integral<T> ? "an integer" : "a number", lo, hi));
  return value;
}

}  // namespace zt::cli
