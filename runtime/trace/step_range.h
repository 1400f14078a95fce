// Which steps `zerotrain train --trace` records: "3:5" (steps 3 to 5, both included) or "4".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zt::trace {

struct StepRange {
  std::int64_t first = 0;
  std::int64_t last = -1;  // first > last: an empty range, nothing is traced

  bool empty() const { return first > last; }
  bool contains(std::int64_t step) const { return step >= first && step <= last; }
  std::string str() const;  // "3:5", or "4" for a single step
};

// Parses "A:B" (1 <= A <= B) or "A" (>= 1). Throws zt::UserError naming what was given and what is
// expected.
StepRange parse_step_range(std::string_view text);

}  // namespace zt::trace
