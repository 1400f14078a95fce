// One rank's compute rate on this machine's CPU, measured, for `zerotrain plan --predict`.
//
// The configured model is copied with one layer (same width, heads, micro batch and sequence
// length) and a vocabulary of at most 256 tokens, so that the measurement allocates one layer and
// no full-size LM head; the blocks that do matrix products and are not the loss block (the
// transformer or decoder block; an MLP's hidden layers) are timed, forward and backward, and
// their FLOPs (models/flops.h) divided by the median time. The rate therefore includes what a
// block spends outside its products (norms, activations, softmax), as a training step does.
#pragma once

#include <string>

#include "runtime/config/config.h"

namespace zt {

struct MeasuredComputeRate {
  double flops_per_s = 0.0;
  std::string what;  // which blocks, shape, threads and runs: printed next to the rate
};

// Runs at least 3 timed passes (after one untimed) and until min_seconds have passed.
MeasuredComputeRate measure_cpu_compute_rate(const ModelConfig& model, int micro_batch, int seq_len, int threads,
                                             double min_seconds);

}  // namespace zt
