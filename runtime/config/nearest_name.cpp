#include "runtime/config/nearest_name.h"

#include <algorithm>
#include <vector>

namespace zt {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal-string-alignment distance; three rows of the dynamic-programming table suffice.
  std::vector<std::size_t> before_previous(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      bool swapped = i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1];
      if (swapped) current[j] = std::min(current[j], before_previous[j - 2] + 1);
    }
    std::swap(before_previous, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> nearest_name(std::string_view typed, std::span<const std::string> candidates) {
  // One edit per three characters (at least one): "n_layr" -> "n_layer", but "x" never -> "lr".
  const std::size_t max_edits = std::max<std::size_t>(1, typed.size() / 3);
  const std::string* best = nullptr;
  std::size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    std::size_t distance = edit_distance(typed, candidate);
    bool is_prefix = typed.size() >= 4 && candidate.starts_with(typed);
    if (distance > max_edits && !is_prefix) continue;
    if (best == nullptr || distance < best_distance) {
      best = &candidate;
      best_distance = distance;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace zt
