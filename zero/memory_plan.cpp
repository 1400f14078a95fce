#include "zero/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "models/activations.h"
#include "core/memory.h"
#include "zero/first_rows.h"
#include "zero/lookup_rows.h"
#include "zero/param_gatherer.h"

namespace zt {

PartitionPlan make_partition_plan(const models::Model& model, const ZeroOptions& options, int world_size) {
  std::vector<std::size_t> numels;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) numels.push_back(model.block(b).param_count());
  const GradientReduction reduction = reduces_gradients_in_place(options, world_size) ? GradientReduction::in_place
                                      : options.stage == 0                          ? GradientReduction::all_reduce
                                                                                    : GradientReduction::reduce_scatter;
  const int shards = reduction == GradientReduction::reduce_scatter ? world_size : 1;
  return PartitionPlan(numels, shards, initial_bucket_size(options), options.first_reduce_bucket_size, reduction,
                       engine_chunk_alignment(shards));
}

namespace {

std::size_t default_buffer_budget(const PartitionPlan& plan) {
  const std::size_t bucket = plan.largest_bucket_numel();
  std::size_t layer = 0;  // block 0 runs backward last: nothing is left to overlap with its reductions
  for (std::size_t b = 1; b < plan.blocks().size(); ++b) layer = std::max(layer, plan.block(b).padded_numel);
  return std::max(kDefaultReduceBuffersPerBucket * bucket, layer + bucket);
}

std::size_t buffer_budget(const PartitionPlan& plan, const ZeroOptions& options) {
  return options.reduce_buffer_size != 0 ? options.reduce_buffer_size : default_buffer_budget(plan);
}

}  // namespace

std::size_t bucket_buffer_count(const PartitionPlan& plan, const ZeroOptions& options) {
  return plan.bucket_buffers(buffer_budget(plan, options));
}

MemoryPlan plan_memory(const models::Model& model, const ZeroOptions& options, int world_size, int micro_batch,
                       int seq_len, Device device) {
  const PartitionPlan plan = make_partition_plan(model, options, world_size);
  const auto c = static_cast<std::int64_t>(dtype_size(options.compute_dtype));
  const auto shard = static_cast<std::int64_t>(plan.shard_numel());
  const auto padded_total = static_cast<std::int64_t>(plan.padded_total_numel());
  const auto total = static_cast<std::int64_t>(plan.total_numel());
  MemoryPlan m;
  m.params = options.stage < 3 ? c * padded_total : c * shard;
  const bool in_place = plan.reduction() == GradientReduction::in_place;
  const bool own_accumulators = accumulates_in_fp32(options) && !accumulates_in_shard(options);
  m.grads = 4 * shard + (options.stage < 2 && !in_place ? c * total : 0) + (own_accumulators ? 4 * total : 0);
  m.optimizer = 3 * 4 * shard;
  const std::size_t largest = plan.largest_bucket_numel();
  std::size_t bucket_numel = bucket_buffer_count(plan, options) * largest;
  if (options.reduce_bucket_size == kAutoBucketSize) {
    // Auto picks a size at most the initial one, whose buffers fill the budget (or two buckets).
    bucket_numel = std::max(buffer_budget(plan, options), 2 * largest);
  }
  m.buckets = in_place ? 0 : static_cast<std::int64_t>(bucket_numel * dtype_size(options.comm_dtype));
  if (const auto rows = rows_exchanged_block(model, options, world_size, micro_batch, seq_len, device))
    m.buckets += static_cast<std::int64_t>(lookup_rows_buffer_bytes(model, *rows, options, world_size, micro_batch, seq_len));
  m.activations =
      static_cast<std::int64_t>(models::Activations::bytes_needed(model, micro_batch, seq_len, device, options.compute_dtype,
                                                                options.recompute_every));
  m.padding_elements = padded_total - total;
  if (options.stage == 3) {
    // In use now (a block and its tied block, and the tied blocks that stay gathered through the
    // forward between their two reads: param_gatherer.h), plus prefetched blocks within the budget
    // (the first prefetch may exceed it by one block), plus persistent blocks.
    const std::size_t blocks = model.num_blocks();
    auto is_persistent = [&](std::size_t b) {
      return zt::is_persistent(plan, b, options.stage3_param_persistence_threshold);
    };
    std::size_t largest = 0, largest_in_use = 0, persistent = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
      std::size_t numel = plan.block(b).padded_numel;
      largest = std::max(largest, numel);
      const std::optional<std::size_t> tied = model.block(b).tied_block();
      std::size_t in_use = numel + (tied ? plan.block(*tied).padded_numel : 0);
      std::vector<std::size_t> kept;  // read before b and again after it
      for (std::size_t user = b + 1; user < blocks; ++user) {
        const std::optional<std::size_t> t = model.block(user).tied_block();
        if (t && *t < b && t != tied && !is_persistent(*t) && std::find(kept.begin(), kept.end(), *t) == kept.end())
          kept.push_back(*t);
      }
      for (std::size_t t : kept) in_use += plan.block(t).padded_numel;
      largest_in_use = std::max(largest_in_use, in_use);
      if (is_persistent(b)) persistent += numel;
    }
    std::size_t ahead = options.stage3_prefetch_bucket_size == 0 ? 0 : options.stage3_prefetch_bucket_size + largest;
    // Each block is gathered at most once at a time, so never more than the whole model.
    m.gathered_bound = c * std::min(static_cast<std::int64_t>(largest_in_use + ahead + persistent), padded_total);
    std::size_t group_slices = 0;  // the secondary partition's (param_gatherer.h)
    for (std::size_t b = 0; b < model.num_blocks(); ++b)
      group_slices += group_slice_numel(plan, b, options.stage3_param_persistence_threshold,
                                        options.zero_hpz_partition_size);
    m.params += c * static_cast<std::int64_t>(group_slices);
  }
  // The update's gather of the next lookup's rows, where the next tokens are known (first_rows.h).
  if (options.stage > 0 && options.lookup_rows_first != LookupRowsFirst::never)
    if (const auto rows = rows_exchanged_block(model, options, world_size, micro_batch, seq_len, device))
      m.gathered_bound += static_cast<std::int64_t>(first_rows_buffer_bytes(
          plan.block(*rows).padded_numel, static_cast<std::size_t>(c), world_size, micro_batch, seq_len));
  return m;
}

std::string activation_checkpointing_summary(const models::Model& model, const ZeroOptions& options, int micro_batch,
                                             int seq_len, Device device) {
  const std::vector<bool> recomputed = models::Activations::recomputed_blocks(model, options.recompute_every);
  const auto kept = models::Activations::bytes_needed(model, micro_batch, seq_len, device, options.compute_dtype);
  const auto checkpointed = models::Activations::bytes_needed(model, micro_batch, seq_len, device,
                                                              options.compute_dtype, options.recompute_every);
  return fmt::format("recomputes {} of {} blocks: activations {} instead of {} ({} saved)",
                     std::count(recomputed.begin(), recomputed.end(), true), model.num_blocks(),
                     format_bytes(static_cast<std::int64_t>(checkpointed)), format_bytes(static_cast<std::int64_t>(kept)),
                     format_bytes(static_cast<std::int64_t>(kept - checkpointed)));
}

std::string format_memory_plans(const models::Model& model, const ZeroOptions& options, int world_size,
                                int micro_batch, int seq_len, Device device) {
  std::string out = fmt::format(
      "Per-rank memory of {} ({} parameters) on {} rank(s), micro batch {} x {}, compute {}, communication {}\n\n",
      model.name(), model.param_count(), world_size, micro_batch, seq_len, dtype_name(options.compute_dtype),
      dtype_name(options.comm_dtype));
  out += fmt::format("{:>5}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>9}\n", "stage", "params",
                     "grads", "optimizer", "model state", "buckets", "activations", "gathered<=", "padding");
  for (int stage = 0; stage <= 3; ++stage) {
    ZeroOptions o = options;
    o.stage = stage;
    MemoryPlan m = plan_memory(model, o, world_size, micro_batch, seq_len, device);
    out += fmt::format("{:>5}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>9}\n", stage,
                       format_bytes(m.params), format_bytes(m.grads), format_bytes(m.optimizer),
                       format_bytes(m.model_states()), format_bytes(m.buckets), format_bytes(m.activations),
                       m.gathered_bound > 0 ? format_bytes(m.gathered_bound) : "-", m.padding_elements);
  }
  if (options.recompute_every > 0)
    out += "\nActivation checkpointing " + activation_checkpointing_summary(model, options, micro_batch, seq_len, device) +
           "\n";
  return out;
}

}  // namespace zt
