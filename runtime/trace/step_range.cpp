#include "runtime/trace/step_range.h"

#include <fmt/format.h>

#include <charconv>

#include "core/error.h"

namespace zt::trace {
namespace {

std::int64_t parse_step(std::string_view part, std::string_view whole) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (part.empty() || error != std::errc() || end != part.data() + part.size() || value < 1)
    throw UserError(fmt::format("--trace '{}': expected a step number (>= 1) or an inclusive range FIRST:LAST such "
                                "as 3:5, found '{}'",
                                whole, part));
  return value;
}

}  // namespace

std::string StepRange::str() const {
  return first == last ? fmt::format("{}", first) : fmt::format("{}:{}", first, last);
}

StepRange parse_step_range(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    std::int64_t step = parse_step(text, text);
    return {step, step};
  }
  StepRange range{parse_step(text.substr(0, colon), text), parse_step(text.substr(colon + 1), text)};
  if (range.first > range.last)
    throw UserError(fmt::format("--trace '{}': the first step ({}) is after the last ({})", text, range.first,
                                range.last));
  return range;
}

}  // namespace zt::trace
