#include "core/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace zt {

std::string_view mem_category_name(MemCategory category) {
  static constexpr std::string_view names[kMemCategoryCount] = {"params",  "grads",       "optimizer", "gathered",
                                                               "buckets", "activations", "workspace", "comm_staging",
                                                               "cached"};
  return names[static_cast<int>(category)];
}

void MemoryTracker::charge(Space space, MemCategory category, std::int64_t bytes) {
  std::lock_guard lock(mutex_);
  SpaceStats& s = spaces_[static_cast<int>(space)];
  MemStats& c = s.categories[static_cast<int>(category)];
  c.current += bytes;
  c.peak = std::max(c.peak, c.current);
  s.total.current += bytes;
  s.total.peak = std::max(s.total.peak, s.total.current);
}

void MemoryTracker::release(Space space, MemCategory category, std::int64_t bytes) {
  std::lock_guard lock(mutex_);
  SpaceStats& s = spaces_[static_cast<int>(space)];
  MemStats& c = s.categories[static_cast<int>(category)];
  if (bytes > c.current)
    throw std::logic_error(fmt::format("memory tracker: releasing {} bytes of {} but only {} are charged", bytes,
                                       mem_category_name(category), c.current));
  c.current -= bytes;
  s.total.current -= bytes;
}

MemStats MemoryTracker::stats(Space space, MemCategory category) const {
  std::lock_guard lock(mutex_);
  return spaces_[static_cast<int>(space)].categories[static_cast<int>(category)];
}

MemStats MemoryTracker::total(Space space) const {
  std::lock_guard lock(mutex_);
  return spaces_[static_cast<int>(space)].total;
}

void MemoryTracker::reset_peaks() {
  std::lock_guard lock(mutex_);
  for (SpaceStats& s : spaces_) {
    for (MemStats& c : s.categories) c.peak = c.current;
    s.total.peak = s.total.current;
  }
}

std::string MemoryTracker::report(Space space) const {
  std::string out;
  for (int i = 0; i < kMemCategoryCount; ++i) {
    auto category = static_cast<MemCategory>(i);
    MemStats s = stats(space, category);
    if (s.peak == 0) continue;
    out += fmt::format("{}{} {} (peak {})", out.empty() ? "" : ", ", mem_category_name(category), format_bytes(s.current),
                       format_bytes(s.peak));
  }
  return out.empty() ? "nothing allocated" : out;
}

MemoryTracker& MemoryTracker::process() {
  static MemoryTracker tracker;
  return tracker;
}

std::string format_bytes(std::int64_t bytes) {
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024 && bytes > -1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  int unit = -1;
  while ((value >= 1024.0 || value <= -1024.0) && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, units[unit]);
}

}  // namespace zt
