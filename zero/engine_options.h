// What the ZeRO engine is asked to do: the stage, overlap, bucket sizes, precision and optimizer
// settings. The config's zero_optimization section is ZeroConfig itself (the schema,
// runtime/config/config_schema.cpp, binds each key to its field here); the trainer adds the
// settings that come from other sections (runtime/train/job_settings.cpp, zero_options). zero/
// does not read YAML.
#pragma once

#include <cstddef>
#include <cstdint>

#include "optim/adamw.h"
#include "optim/loss_scaler.h"
#include "core/dtype.h"

namespace zt {

// The defaults of zero_optimization's sizes, in elements: the config's and the engine's.
// reduce_bucket_size: 25 MiB of fp32 (PyTorch DDP's bucket), about one GPT-2 layer per bucket;
// prefetch: about two GPT-2 layers; persistence: small tensors (biases, norms) stay gathered.
inline constexpr std::size_t kDefaultReduceBucketSize = 6'553'600;
// reduce_bucket_size: auto (zero/bucket_autotune.h) is this value; it picks at least the smallest
// size (256 KiB of fp32: below that, a reduction's cost is all latency on any link) and at most the
// default.
inline constexpr std::size_t kAutoBucketSize = 0;
inline constexpr std::size_t kSmallestAutoBucketSize = 65'536;
// The first bucket (the last layers' gradients, ready first): 1 MiB of fp32, as PyTorch DDP, so
// that the first reduction starts early in backward.
inline constexpr std::size_t kDefaultFirstReduceBucketSize = 262'144;
// Bucket buffers by default: room for four buckets, and at least for the largest layer's buckets
// plus one (memory_plan.h, bucket_buffer_count).
inline constexpr std::size_t kDefaultReduceBuffersPerBucket = 4;
inline constexpr std::size_t kDefaultPrefetchBucketSize = 15'000'000;
inline constexpr std::size_t kDefaultPersistenceThreshold = 100'000;

// The dtype gradients are reduced in; `compute` = the same as the compute dtype.
enum class CommDataType { fp32, bf16, fp16, compute };

// How a tied embedding's gradient is reduced (zero/lookup_rows.h): as one dense gradient after
// backward, or the LM head's part during backward and the lookup's as the rows the batch touched;
// automatic picks rows where they are fewer bytes (on CPU devices).
enum class EmbeddingGradient { automatic, rows, dense };

// Whether an update gathers the next lookup's rows first (first_rows.h): where the ranks' latest
// update and table gather say it pays (rows_first_choice.h), always, or never.
enum class LookupRowsFirst { automatic, always, never };

// The zero_optimization section: these are the keys' defaults.
struct ZeroConfig {
  int stage = 0;                                    // 0, 1, 2 or 3
  bool overlap_comm = true;
  std::size_t reduce_bucket_size = kDefaultReduceBucketSize;  // elements per gradient bucket; kAutoBucketSize = auto
  std::size_t first_reduce_bucket_size = kDefaultFirstReduceBucketSize;        // elements of the first bucket
  // Elements all bucket buffers may hold together (at least two buckets' worth are used);
  // 0 = the default (memory_plan.h, bucket_buffer_count).
  std::size_t reduce_buffer_size = 0;
  std::size_t stage3_prefetch_bucket_size = kDefaultPrefetchBucketSize;        // elements gathered ahead of use
  std::size_t stage3_param_persistence_threshold = kDefaultPersistenceThreshold;  // blocks this small stay gathered
  // Stage 3, ZeRO++'s secondary partition (hpZ): groups of this many consecutive ranks keep, from a
  // block's first gather after an optimizer step, a copy of the block split among them, and later
  // gathers of the block (backward's, later micro-batches') go within the group. With ranks placed
  // host by host and the group a host, those gathers never cross the slower link. 1 = off.
  int zero_hpz_partition_size = 1;
  CommDataType communication_data_type = CommDataType::fp32;  // resolved into ZeroOptions::comm_dtype
  EmbeddingGradient embedding_gradient = EmbeddingGradient::automatic;
  // Stages 1-3 with the embedding's gradient as rows, where the trainer knows the next batch: the
  // update gathers the rows the next lookup reads first and the table during the forward
  // (first_rows.h); never: the whole table before the forward, as without the next tokens.
  LookupRowsFirst lookup_rows_first = LookupRowsFirst::automatic;
  bool operator==(const ZeroConfig&) const = default;
};

struct ZeroOptions : ZeroConfig {
  DType compute_dtype = DType::f32;                 // parameters, activations, block gradients
  DType comm_dtype = DType::f32;                    // gradient buckets and their reduction
  int gradient_accumulation_steps = 1;
  AdamWOptions adamw;                               // lr is replaced by the schedule every step
  double gradient_clipping = 1.0;                   // max global norm; 0 = off
  bool loss_scaling = false;                        // fp16: dynamic (or static) loss scaling
  LossScalerOptions loss_scaler;
  // Activation checkpointing: recompute the forward of every k-th block before its backward
  // instead of keeping its saved activations (models::Activations); 0 = off.
  int recompute_every = 0;
};

// The bucket size the engine starts with: auto starts with (and never exceeds) the default.
inline std::size_t initial_bucket_size(const ZeroOptions& options) {
  return options.reduce_bucket_size == kAutoBucketSize ? kDefaultReduceBucketSize : options.reduce_bucket_size;
}

// Stages 0/1 keep full block gradients across micro-batches; in bf16/f16 they are summed in fp32
// accumulators (block gradients hold one micro-batch), as the CPU path's fp32 gradients are.
inline bool accumulates_in_fp32(const ZeroOptions& options) {
  return options.stage < 2 && options.gradient_accumulation_steps > 1 && options.compute_dtype != DType::f32;
}

// At stage 0 the fp32 gradient shard is the whole gradient, the accumulators' size: each block's
// range of it is that block's accumulator until the step's reduction overwrites it with the
// ranks' average. Stage 1's shard is a 1/N slice, so it keeps accumulators of its own.
inline bool accumulates_in_shard(const ZeroOptions& options) {
  return accumulates_in_fp32(options) && options.stage == 0;
}

// Stage 0 (or stage 1 on one rank) in fp32: every rank keeps the whole fp32 gradient, laid out as
// the buckets cut it (partition.h), so backward writes each block's gradient where its bucket is
// reduced and the reduction runs in place. Nothing is copied into bucket buffers or added back,
// and neither the block gradients nor the buffers take memory of their own.
inline bool reduces_gradients_in_place(const ZeroOptions& options, int world_size) {
  return (options.stage == 0 || (options.stage == 1 && world_size == 1)) && options.compute_dtype == DType::f32 &&
         options.comm_dtype == DType::f32;
}

}  // namespace zt
