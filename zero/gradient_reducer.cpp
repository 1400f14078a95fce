#include "zero/gradient_reducer.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/device_ops.h"

namespace zt {

GradientReducer::GradientReducer(const PartitionPlan& plan, std::vector<std::optional<std::size_t>> tied_to,
                                 Communicator& comm, Stream& compute, Device device, DType comm_dtype, bool overlap,
                                 ExposedTime& exposed, MemoryTracker& tracker)
    : plan_(plan),
      comm_(comm),
      compute_(compute),
      comm_dtype_(comm_dtype),
      overlap_(overlap),
      all_reduce_(plan.world_size() == 1 && comm.world_size() > 1),
      tied_to_(std::move(tied_to)),
      contributors_(plan.blocks().size(), 1),
      exposed_(exposed) {
  for (std::size_t b = 0; b < tied_to_.size(); ++b)
    if (tied_to_[b]) ++contributors_.at(*tied_to_[b]);
  // Two alternating buffers let one bucket fill while the previous one is being reduced.
  std::size_t slots = std::min<std::size_t>(2, plan.buckets().size());
  for (std::size_t i = 0; i < slots; ++i)
    slots_.push_back({Buffer(device, comm_dtype, plan.largest_bucket_numel(), MemCategory::buckets, tracker), {}, {}});
}

void GradientReducer::begin(BufferView grad_shard, std::function<BufferView(std::size_t)> block_grad) {
  if (grad_shard.numel != plan_.shard_numel() || grad_shard.dtype != DType::f32)
    throw std::invalid_argument("gradient reducer: the gradient shard must be f32 with shard_numel elements");
  grad_shard_ = grad_shard;
  block_grad_ = std::move(block_grad);
  pending_ = contributors_;
  unpacked_.clear();
  for (const BucketPlacement& bucket : plan_.buckets()) unpacked_.push_back(bucket.blocks.size());
  slot_of_bucket_.assign(plan_.buckets().size(), std::nullopt);
}

std::vector<std::size_t> GradientReducer::block_ready(std::size_t block) {
  std::vector<std::size_t> packed;
  auto contribute = [&](std::size_t b) {
    if (pending_.at(b) == 0) throw std::logic_error("gradient reducer: a block reported ready twice");
    if (--pending_[b] == 0) {
      pack(b);
      packed.push_back(b);
    }
  };
  contribute(block);
  if (tied_to_.at(block)) contribute(*tied_to_[block]);
  return packed;
}

void GradientReducer::pack(std::size_t block) {
  const BlockPlacement& placement = plan_.block(block);
  Slot& slot = acquire_slot(placement.bucket);
  BufferView grad = block_grad_(block);
  const std::size_t chunk = placement.chunk_numel;
  for (int r = 0; r < plan_.world_size(); ++r) {
    // Rank r's part of this block, whose padding tail must be zero (the slot may hold another
    // bucket's values there).
    const PartitionPlan::Chunk part = plan_.chunk(block, r);
    BufferView dst = slot.buffer.slice(plan_.bucket_rank_offset(placement.bucket, r) + placement.offset_in_rank_chunk,
                                       chunk);
    convert_copy(dst.slice(0, part.real), grad.slice(part.begin, part.real), compute_);
    fill_zero(dst.slice(part.real, chunk - part.real), compute_);
  }
  if (--unpacked_.at(placement.bucket) == 0) launch(placement.bucket);
}

GradientReducer::Slot& GradientReducer::acquire_slot(std::size_t bucket) {
  if (slot_of_bucket_.at(bucket)) return slots_[*slot_of_bucket_[bucket]];
  Slot& slot = slots_[next_slot_];
  if (slot.bucket) drain(slot);
  slot.bucket = bucket;
  slot_of_bucket_[bucket] = next_slot_;
  next_slot_ = (next_slot_ + 1) % slots_.size();
  return slot;
}

void GradientReducer::launch(std::size_t bucket) {
  Slot& slot = slots_[*slot_of_bucket_.at(bucket)];
  BufferView data = slot.buffer.slice(0, plan_.bucket(bucket).numel(plan_.world_size()));
  if (all_reduce_) {
    slot.work = comm_.all_reduce(data, ReduceOp::avg, compute_);
  } else {
    std::size_t chunk = plan_.bucket(bucket).rank_chunk_numel;
    BufferView mine = data.slice(plan_.bucket_rank_offset(bucket, comm_.rank()), chunk);
    slot.work = comm_.reduce_scatter(data, mine, ReduceOp::avg, compute_);
  }
  works_.push_back(slot.work);
  if (timeline_)
    timeline_->add_collective(fmt::format("{} bucket {}", all_reduce_ ? "all_reduce" : "reduce_scatter", bucket),
                              slot.work, {{"bucket", bucket}, {"blocks", plan_.bucket(bucket).blocks}});
  if (!overlap_) drain(slot);
}

void GradientReducer::drain(Slot& slot) {
  if (!slot.bucket) return;
  const BucketPlacement& bucket = plan_.bucket(*slot.bucket);
  exposed_.wait(slot.work, compute_, timeline_, [&] {
    return std::pair{fmt::format("wait bucket {}", *slot.bucket),
                     nlohmann::json{{"bucket", *slot.bucket}, {"sequence", slot.work.sequence()}}};
  });
  std::size_t offset = all_reduce_ ? 0 : plan_.bucket_rank_offset(*slot.bucket, comm_.rank());
  accumulate(grad_shard_.slice(bucket.shard_offset, bucket.rank_chunk_numel),
             slot.buffer.slice(offset, bucket.rank_chunk_numel), compute_);
  slot.bucket.reset();
}

void GradientReducer::finish() {
  for (std::size_t b = 0; b < pending_.size(); ++b)
    if (pending_[b] != 0) throw std::logic_error("gradient reducer: backward finished with blocks not reported");
  // Drain in launch order: the slot filled first holds the older reduction.
  for (std::size_t i = 0; i < slots_.size(); ++i) drain(slots_[(next_slot_ + i) % slots_.size()]);
}

}  // namespace zt
