// How long a block's forward and backward take on a device of a given rate: the one model of
// kernel time that the emulated accelerator (ComputeContext::emulated) waits out and that
// `zerotrain plan --predict` adds up, so a prediction and an emulated measurement rest on the same
// numbers.
//
// Roofline, per block and micro batch: time = max(FLOPs / flops_per_s, bytes / bytes_per_s), the
// whole split 1/3 forward, 2/3 backward (a Linear layer's backward is two products, its forward
// one; plan --predict has always split a micro batch so). FLOPs are the block's own count
// (models/flops.h: matrix products only). Bytes are the block's memory traffic, to first order: its
// parameters read in forward and in backward and its gradient written (3 x parameter bytes), and
// its activations (output and saved tensors) written in forward, read in backward and their
// gradients written there (3 x activation bytes), each in its storage dtype. bytes_per_s = 0
// leaves the memory side out (a rate measured on whole blocks already includes it).
#pragma once

#include <cstddef>

#include "core/dtype.h"
#include "models/block.h"
#include "models/device_rates.h"

namespace zt::models {

struct BlockTime {
  double forward_s = 0.0;
  double backward_s = 0.0;
  double total() const { return forward_s + backward_s; }
};

// The block's memory traffic of one forward + backward (see above).
double block_bytes(const Block& block, int B, int T, DType dtype);

// Throws std::invalid_argument when flops_per_s <= 0 or bytes_per_s < 0.
BlockTime block_time(const Block& block, int B, int T, DType dtype, const DeviceRates& rates);

// AdamW's step over `parameters` elements of a rank's shard: memory-bound, so its bytes over
// bytes_per_s (0 when that is 0). Per element it reads the fp32 gradient, master, and both moments
// and writes the three back (28 bytes), and writes the parameter in its dtype.
double optimizer_step_seconds(std::size_t parameters, DType param_dtype, const DeviceRates& rates);

// The step's gradient statistics over `elements` of a rank's fp32 gradient shard (the squared norm
// and the inf/NaN check, zero/step_statistics.h): memory-bound, one read of 4 bytes per element
// (0 when bytes_per_s is 0).
double gradient_statistics_seconds(std::size_t elements, const DeviceRates& rates);

// A copy of `bytes` within device memory: each byte read and written once (0 when bytes_per_s is 0).
double copy_seconds(std::size_t bytes, const DeviceRates& rates);

// The emulated device being busy for `seconds`: waits on the clock, using no core.
void occupy_device(double seconds);

}  // namespace zt::models
