#include "runtime/data/shuffle.h"

#include <utility>

namespace zt::data {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t SplitMix64::below(std::uint64_t bound) {
  // Reject the few values at the bottom that would make some remainders more likely than others.
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t value = next();
    if (value >= threshold) return value % bound;
  }
}

std::uint64_t derive_seed(std::uint64_t parent, std::uint64_t stream) {
  SplitMix64 mixer(parent ^ (stream * 0xD1B54A32D192ED03ull));
  mixer.next();
  return mixer.next();
}

void shuffle(std::span<std::uint32_t> values, std::uint64_t seed) {
  SplitMix64 random(seed);
  for (std::size_t i = values.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(random.below(i));
    std::swap(values[i - 1], values[j]);
  }
}

}  // namespace zt::data
