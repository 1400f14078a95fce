// reduce_bucket_size: auto — the gradient bucket size chosen from what the job measures.
//
// After the first step, every rank times reductions of two sizes of the kind its buckets use
// (all-reduce for stage 0, reduce-scatter otherwise) and the ranks average those timings and the
// step's backward time, so all choose the same size. With V gradient elements of e bytes in
// buckets of s elements, a reduction costs alpha + s*e*gamma (latency, time per byte) and all of
// them V/s*alpha + V*e*gamma. Two regimes:
//   - backward is longer: the reductions fit in 80 % of backward for any
//       s >= V*alpha / (0.8*T_backward - V*e*gamma),
//     and the smallest such s leaves the shortest tail (the last bucket can only start when
//     backward ends);
//   - communication is longer: the step approaches the communication time, whose bucket-
//     dependent part V/s*alpha + s*e*gamma (latencies + the last bucket's tail) is smallest at
//       s = sqrt(V*alpha / (e*gamma)).
// The result is clamped to [min_numel, max_numel]. What the model ignores: the comm thread's CPU
// time, packing, and contention between compute and communication for memory bandwidth.
#pragma once

#include <cstddef>
#include <string>

#include "comm/communicator.h"
#include "core/memory.h"

namespace zt {

struct BucketTimings {
  double latency_ms = 0.0;   // alpha: a reduction of (almost) nothing
  double ms_per_byte = 0.0;  // gamma: each further byte of a bucket
  double backward_ms = 0.0;  // one micro-batch's backward
};

// Collective: times reductions on comm (all-reduce when all_reduce, else reduce-scatter) of
// buffers up to max_numel elements of dtype and returns the ranks' average timings, identical on
// every rank. backward_ms: this rank's measured backward time.
BucketTimings measure_bucket_timings(Communicator& comm, DType dtype, bool all_reduce, std::size_t max_numel,
                                     double backward_ms, Stream& stream, MemoryTracker& tracker);

struct BucketSizeChoice {
  std::size_t bucket_numel = 0;
  std::string reason;  // one line for the log: the regime, the inputs and the formula's value
};

BucketSizeChoice choose_bucket_size(const BucketTimings& timings, std::size_t gradient_numel,
                                    std::size_t element_bytes, std::size_t min_numel, std::size_t max_numel);

}  // namespace zt
