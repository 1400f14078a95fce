#include "models/init.h"

#include <cmath>
#include <numbers>

namespace zt::models {

double NormalGenerator::uniform_open() {
  // 53 random bits -> [0, 1); 1 - u lies in (0, 1], safe for log().
  return 1.0 - static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

double NormalGenerator::next() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double r = std::sqrt(-2.0 * std::log(uniform_open()));
  double theta = 2.0 * std::numbers::pi * uniform_open();
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

std::uint64_t block_seed(std::uint64_t seed, std::size_t block_index) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(block_index) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void init_block_params(const ParamLayout& layout, std::uint64_t seed, std::size_t block_index, float* flat) {
  NormalGenerator gen(block_seed(seed, block_index));
  for (const ParamTensor& t : layout.tensors()) {
    float* p = flat + t.offset;
    switch (t.init.kind) {
      case InitRule::Kind::zeros:
        for (std::size_t i = 0; i < t.numel; ++i) p[i] = 0.0f;
        break;
      case InitRule::Kind::ones:
        for (std::size_t i = 0; i < t.numel; ++i) p[i] = 1.0f;
        break;
      case InitRule::Kind::normal:
        for (std::size_t i = 0; i < t.numel; ++i) p[i] = static_cast<float>(gen.next() * t.init.std);
        break;
    }
  }
}

}  // namespace zt::models
