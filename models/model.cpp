#include "models/model.h"

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

}  // namespace zt::models
