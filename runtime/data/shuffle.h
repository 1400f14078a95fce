// Deterministic shuffling for the data order. std::shuffle and the std distributions are not
// specified bit for bit and differ between standard libraries, which would tie the order of the
// training data to the compiler; SplitMix64 and the Fisher-Yates shuffle below are fully specified.
#pragma once

#include <cstdint>
#include <span>

namespace zt::data {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [0, bound), bound > 0, without modulo bias.
  std::uint64_t below(std::uint64_t bound);

 private:
  std::uint64_t state_;
};

// A seed for a sub-stream (an epoch, a shard) derived from a parent seed, so that sub-streams are
// unrelated however close their numbers are.
std::uint64_t derive_seed(std::uint64_t parent, std::uint64_t stream);

// Fisher-Yates shuffle of `values` driven by SplitMix64(seed).
void shuffle(std::span<std::uint32_t> values, std::uint64_t seed);

}  // namespace zt::data
