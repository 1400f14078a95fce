#include "models/model.h"

#include <fmt/format.h>

#include <stdexcept>

namespace zt::models {

std::size_t Model::param_count() const {
  std::size_t n = 0;
  for (const auto& b : blocks_) n += b->param_count();
  return n;
}

double Model::flops_per_step(int B, int T) const {
  double total = 0.0;
  for (const auto& b : blocks_) total += b->flops(B, T);
  return total;
}

void Model::synthetic_batch(std::uint64_t, int, std::vector<float>&, std::vector<std::int32_t>&) const {
  throw std::logic_error(fmt::format("a {} model reads token shards; it has no synthetic task", name()));
}

}  // namespace zt::models
