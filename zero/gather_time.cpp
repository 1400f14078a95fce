#include "zero/gather_time.h"

#include <algorithm>

namespace zt {

void GatherTime::add(const TwoLevelAllGather::Issued& issued, std::size_t begin, std::size_t count,
                     std::size_t chunk_numel) {
  if (begin == 0) {
    latest_ms();  // the gather before this one, if it has completed
    running_.clear();
  }
  const bool last = begin + count == chunk_numel;
  whole_ = last;
  for (const auto& [label, work] : issued.parts)
    if (last || label != TwoLevelAllGather::kWithinHost) running_.push_back(work);
}

std::optional<double> GatherTime::latest_ms() {
  if (whole_ && std::all_of(running_.begin(), running_.end(), [](const Work& w) { return w.is_completed(); })) {
    double sum = 0.0;
    for (const Work& work : running_) sum += work.duration_ms();
    latest_ms_ = sum;
    running_.clear();
    whole_ = false;
  }
  return latest_ms_;
}

}  // namespace zt
