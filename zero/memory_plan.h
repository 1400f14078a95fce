// What the ZeRO engine will allocate per rank, computed without allocating: the numbers of
// `zerotrain plan`, and what the engine's tracked memory must equal (model states and buckets
// exactly; gathered parameters as an upper bound).
#pragma once

#include <cstdint>
#include <string>

#include "models/model.h"
#include "zero/engine_options.h"
#include "zero/partition.h"

namespace zt {

// The partition the engine uses and the reduction of its stage (GradientReduction, partition.h):
// stages 1-3 reduce-scatter over world_size shards (chunks aligned to kChunkAlignment elements on
// more than one rank); stage 0 partitions nothing (one shard) and all-reduces, in place when
// gradients and communication are fp32 (and so does stage 1 on one rank).
PartitionPlan make_partition_plan(const models::Model& model, const ZeroOptions& options, int world_size);

// How many bucket buffers the engine uses with plan: as many as reduce_buffer_size holds (at least
// two). The default budget holds four buckets, and at least the buckets of the largest layer that
// is not the last in backward plus one: backward hands over a whole layer's gradient at once, so
// with fewer buffers it would wait for that layer's reductions instead of running the next layer
// while they go on.
std::size_t bucket_buffer_count(const PartitionPlan& plan, const ZeroOptions& options);

struct MemoryPlan {
  std::int64_t params = 0;       // compute-dtype parameters (stage 3: the shard and any secondary partition)
  std::int64_t grads = 0;        // block gradients (stages 0/1; + fp32 accumulators) + the fp32 gradient shard
  std::int64_t optimizer = 0;    // fp32 master, exp_avg, exp_avg_sq of the shard
  std::int64_t buckets = 0;      // the gradient bucket buffers (reduce_bucket_size: auto, an upper bound) and
                                 // the buffers of a tied embedding's rows exchange (zero/lookup_rows.h)
  std::int64_t activations = 0;  // one micro-batch's activations
  // Most bytes of gathered parameters at any moment: stage 3's blocks, and at stages 1-3 the
  // update's gather of the next lookup's rows where the embedding's gradient goes as rows.
  std::int64_t gathered_bound = 0;
  std::int64_t padding_elements = 0;  // elements added to cut every block into whole aligned chunks
  std::int64_t model_states() const { return params + grads + optimizer; }
};

MemoryPlan plan_memory(const models::Model& model, const ZeroOptions& options, int world_size, int micro_batch,
                       int seq_len, Device device);

// options.recompute_every > 0: "recomputes N of M blocks: activations X instead of Y (Z saved)",
// exact, for one micro batch (B, T).
std::string activation_checkpointing_summary(const models::Model& model, const ZeroOptions& options, int micro_batch,
                                             int seq_len, Device device);

// A table of the plan for stages 0-3 (the rest of the options as given), like DeepSpeed's
// memory estimator.
std::string format_memory_plans(const models::Model& model, const ZeroOptions& options, int world_size,
                                int micro_batch, int seq_len, Device device);

}  // namespace zt
