// Deterministic, portable parameter initialisation.
//
// std::normal_distribution differs between standard libraries, so normals come from
// std::mt19937_64 (whose output sequence the standard fixes) through Box-Muller written out here,
// computed in double and rounded once to float. Each block draws from its own generator seeded by
// (seed, block index), so a block's initial values do not depend on which other blocks exist or
// which rank initialises it. Initialisation always runs on the CPU in fp32; GPU runs copy (and
// round, for bf16/f16) the result, so CPU and GPU start from the same values bit for bit.
#pragma once

#include <cstdint>
#include <random>

#include "models/param_layout.h"

namespace zt::models {

class NormalGenerator {
 public:
  explicit NormalGenerator(std::uint64_t seed) : engine_(seed) {}
  double next();  // N(0, 1)

 private:
  double uniform_open();  // in (0, 1]
  std::mt19937_64 engine_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// Seed of block block_index's generator: a SplitMix64 mix of the two, so nearby seeds and
// indices give unrelated streams.
std::uint64_t block_seed(std::uint64_t seed, std::size_t block_index);

// Fills flat (fp32, on the CPU) with the layout's initial values for block block_index.
void init_block_params(const ParamLayout& layout, std::uint64_t seed, std::size_t block_index, float* flat);

}  // namespace zt::models
