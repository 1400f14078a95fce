#include "zero/gradient_reducer.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/device_ops.h"

namespace zt {

GradientReducer::GradientReducer(const PartitionPlan& plan, std::vector<std::optional<std::size_t>> tied_to,
                                 Communicator& comm, Stream& compute, Device device, DType comm_dtype, bool overlap,
                                 std::size_t buffers, ExposedTime& exposed, MemoryTracker& tracker,
                                 std::optional<std::size_t> rows_block)
    : plan_(plan),
      comm_(comm),
      compute_(compute),
      comm_dtype_(comm_dtype),
      overlap_(overlap),
      in_place_(plan.reduction() == GradientReduction::in_place),
      all_reduce_(plan.reduction() != GradientReduction::reduce_scatter),
      tied_to_(std::move(tied_to)),
      contributors_(plan.blocks().size(), 1),
      rows_block_(rows_block),
      exposed_(exposed) {
  for (std::size_t b = 0; b < tied_to_.size(); ++b)
    if (tied_to_[b]) ++contributors_.at(*tied_to_[b]);
  if (rows_block_) {  // its own backward is the rows exchange: only the blocks tied to it contribute
    if (contributors_.at(*rows_block_) < 2)
      throw std::invalid_argument("gradient reducer: a block exchanged as rows needs a block tied to it");
    --contributors_[*rows_block_];
  }
  if (plan.shards() != (all_reduce_ ? 1 : comm.world_size()))
    throw std::invalid_argument("gradient reducer: a reduce-scatter needs one shard per rank, an all-reduce one shard");
  if (in_place_ && comm_dtype != DType::f32)
    throw std::invalid_argument("gradient reducer: in place needs fp32 communication");
  if (in_place_) return;
  // Buffers are used in turn: while one bucket fills, the others' reductions run. Only the
  // bucket being filled is not launched yet (the rows block's deferred buckets never take its
  // buffer: next_rows_buffer_free), so two buffers always suffice to make progress.
  if (buffers < 2) throw std::invalid_argument("gradient reducer: at least two bucket buffers are needed");
  std::size_t slots = std::min(buffers, plan.buckets().size());
  for (std::size_t i = 0; i < slots; ++i)
    slots_.push_back({Buffer(device, comm_dtype, plan.largest_bucket_numel(), MemCategory::buckets, tracker), {}, {}});
}

void GradientReducer::begin(BufferView grad_shard, std::function<BufferView(std::size_t)> block_grad,
                            std::function<void(std::size_t)> landed) {
  if (grad_shard.numel != plan_.shard_numel() || grad_shard.dtype != DType::f32)
    throw std::invalid_argument("gradient reducer: the gradient shard must be f32 with shard_numel elements");
  grad_shard_ = grad_shard;
  block_grad_ = std::move(block_grad);
  landed_ = std::move(landed);
  unlanded_.clear();
  for (const BlockPlacement& block : plan_.blocks()) unlanded_.push_back(block.buckets.size());
  pending_ = contributors_;
  tied_reported_.assign(tied_to_.size(), false);
  unpacked_.clear();
  for (const BucketPlacement& bucket : plan_.buckets()) unpacked_.push_back(bucket.pieces.size());
  slot_of_bucket_.assign(plan_.buckets().size(), std::nullopt);
  rows_block_complete_ = false;
  rows_grad_ = {};
  deferred_.clear();
  rows_buckets_left_ = rows_block_ ? plan_.block(*rows_block_).buckets.size() : 0;
}

std::vector<std::size_t> GradientReducer::block_ready(std::size_t block) {
  if (block == rows_block_) throw std::logic_error("gradient reducer: the rows block's backward is its rows exchange");
  std::vector<std::size_t> packed;
  contribute(block, packed);
  if (tied_to_.at(block) && !tied_reported_.at(block)) contribute(*tied_to_[block], packed);
  pack_deferred_share(packed);
  return packed;
}

std::vector<std::size_t> GradientReducer::tied_grads_ready(std::size_t block) {
  if (!tied_to_.at(block)) throw std::logic_error("gradient reducer: a block tied to none reported its tied gradient");
  if (tied_reported_.at(block)) throw std::logic_error("gradient reducer: a tied gradient reported done twice");
  tied_reported_[block] = true;
  std::vector<std::size_t> packed;
  contribute(*tied_to_[block], packed);
  pack_deferred_share(packed);
  return packed;
}

void GradientReducer::contribute(std::size_t block, std::vector<std::size_t>& packed) {
  if (pending_.at(block) == 0) throw std::logic_error("gradient reducer: a block reported ready twice");
  if (--pending_[block] != 0) return;
  if (block == rows_block_) {
    defer_rows_block(packed);
  } else {
    pack(block, packed);
    packed.push_back(block);
  }
}

void GradientReducer::pack_deferred_share(std::vector<std::size_t>& packed) {
  // The rows block's buckets, spread over the backward that is left so that they are all out
  // before it ends. Which ones go now depends on the plan and the pack order only, never on
  // timing: every rank launches the same reductions in the same order.
  const std::size_t count = std::exchange(deferred_now_, deferred_per_block_);
  for (std::size_t n = 0; n < count && !deferred_.empty() && next_rows_buffer_free(); ++n) {
    const std::size_t bucket = deferred_.front();
    deferred_.pop_front();
    pack_rows_piece(bucket, packed);
  }
}

bool GradientReducer::next_rows_buffer_free() const {
  if (in_place_) return true;
  const Slot& slot = slots_[next_slot_];
  return !slot.bucket || slot.work.sequence() != 0;  // empty, or holding a launched reduction
}

void GradientReducer::pack(std::size_t block, std::vector<std::size_t>& packed) {
  BufferView grad = in_place_ ? BufferView{} : block_grad_(block);
  // The block's pieces in bucket order: a bucket filled by this block is launched before the
  // next piece is packed, so its reduction runs while the rest of the block is copied. In place
  // the gradient already lies in its buckets.
  for (std::size_t bucket : plan_.block(block).buckets) {
    if (!in_place_) {
      Slot& slot = acquire_slot(bucket);
      for (const BucketPiece& piece : plan_.bucket(bucket).pieces)
        if (piece.block == block) pack_piece(piece, grad, slot, bucket);
    }
    if (--unpacked_.at(bucket) == 0) {
      launch(bucket);
    } else if (unpacked_[bucket] == 1 && rows_piece_waits_in(bucket)) {
      pack_rows_piece(bucket, packed);
    }
  }
}

bool GradientReducer::rows_piece_waits_in(std::size_t bucket) const {
  if (!rows_block_complete_) return false;
  const auto& buckets = plan_.block(*rows_block_).buckets;
  return std::find(buckets.begin(), buckets.end(), bucket) != buckets.end() &&
         std::find(deferred_.begin(), deferred_.end(), bucket) == deferred_.end();
}

void GradientReducer::defer_rows_block(std::vector<std::size_t>& packed) {
  rows_block_complete_ = true;
  if (!in_place_) rows_grad_ = block_grad_(*rows_block_);
  for (std::size_t bucket : plan_.block(*rows_block_).buckets) {
    if (plan_.bucket(bucket).pieces.size() == 1) {
      deferred_.push_back(bucket);
    } else if (unpacked_.at(bucket) == 1) {  // its other blocks are packed already
      pack_rows_piece(bucket, packed);
    }  // else packed with the last of its other blocks (pack)
  }
  // The blocks still to report, each followed by its share of the deferred buckets.
  std::size_t later = 0;
  for (std::size_t b = 0; b < pending_.size(); ++b) later += b != *rows_block_ && pending_[b] > 0;
  const RowsBucketSpread spread = rows_bucket_spread(deferred_.size(), later, in_place_ ? 0 : slots_.size() - 1);
  deferred_now_ = spread.first;  // the report completing the block packs them next
  deferred_per_block_ = spread.per_report;
}

RowsBucketSpread rows_bucket_spread(std::size_t deferred, std::size_t later, std::size_t spare_buffers) {
  auto even = [](std::size_t buckets, std::size_t reports) {
    return std::max<std::size_t>(1, (buckets + reports - 1) / reports);
  };
  const std::size_t first = std::min(deferred, std::max(even(deferred, later + 1), spare_buffers));
  return {.first = first, .per_report = even(deferred - first, std::max<std::size_t>(1, later))};
}

void GradientReducer::pack_rows_piece(std::size_t bucket, std::vector<std::size_t>& packed) {
  if (!in_place_) {
    Slot& slot = acquire_slot(bucket);
    for (const BucketPiece& piece : plan_.bucket(bucket).pieces)
      if (piece.block == *rows_block_) pack_piece(piece, rows_grad_, slot, bucket);
  }
  if (--unpacked_.at(bucket) == 0) launch(bucket);
  if (--rows_buckets_left_ == 0) packed.push_back(*rows_block_);
}

void GradientReducer::pack_piece(const BucketPiece& piece, BufferView grad, Slot& slot, std::size_t bucket) {
  for (int r = 0; r < plan_.shards(); ++r) {
    // The piece's elements of rank r's chunk; past the block's end they are padding and must be
    // zero (the slot may hold another bucket's values there).
    const PartitionPlan::Chunk part = plan_.chunk(piece.block, r);
    const std::size_t real = part.real > piece.chunk_offset ? std::min(piece.numel, part.real - piece.chunk_offset) : 0;
    BufferView dst = slot.buffer.slice(plan_.bucket_rank_offset(bucket, r) + piece.offset_in_rank_chunk, piece.numel);
    if (real > 0) convert_copy(dst.slice(0, real), grad.slice(part.begin + piece.chunk_offset, real), compute_);
    if (real < piece.numel) fill_zero(dst.slice(real, piece.numel - real), compute_);
  }
}

GradientReducer::Slot& GradientReducer::acquire_slot(std::size_t bucket) {
  if (slot_of_bucket_.at(bucket)) return slots_[*slot_of_bucket_[bucket]];
  Slot& slot = slots_[next_slot_];
  if (slot.bucket && slot.work.sequence() == 0)
    throw std::logic_error("gradient reducer: every bucket buffer holds a bucket that is not full");
  if (slot.bucket) drain(slot);
  slot.bucket = bucket;
  slot_of_bucket_[bucket] = next_slot_;
  next_slot_ = (next_slot_ + 1) % slots_.size();
  return slot;
}

void GradientReducer::launch(std::size_t bucket) {
  const BucketPlacement& placement = plan_.bucket(bucket);
  BufferView data = in_place_ ? grad_shard_.slice(placement.shard_offset, placement.rank_chunk_numel)
                              : slots_[*slot_of_bucket_.at(bucket)].buffer.slice(0, placement.numel(plan_.shards()));
  // In place the shard keeps the sum, which the engine divides in the optimizer's multiplier: the
  // average's division would be one more pass over the whole gradient.
  const ReduceOp op = in_place_ ? ReduceOp::sum : ReduceOp::avg;
  Work work;
  if (all_reduce_) {
    work = comm_.all_reduce(data, op, compute_);
  } else {
    BufferView mine = data.slice(plan_.bucket_rank_offset(bucket, comm_.rank()), placement.rank_chunk_numel);
    work = comm_.reduce_scatter(data, mine, op, compute_);
  }
  works_.push_back(work);
  if (timeline_)
    timeline_->add_collective(fmt::format("{} bucket {}", all_reduce_ ? "all_reduce" : "reduce_scatter", bucket), work,
                              {{"bucket", bucket}, {"blocks", placement.blocks()}, {"elements", data.numel}});
  if (in_place_) {
    if (overlap_) {
      in_place_works_.emplace_back(bucket, work);
    } else {
      wait(bucket, work);
      landed(bucket);
    }
    return;
  }
  Slot& slot = slots_[*slot_of_bucket_[bucket]];
  slot.work = work;
  if (!overlap_) drain(slot);
}

void GradientReducer::wait(std::size_t bucket, const Work& work) {
  exposed_.wait(work, compute_, timeline_, [&] {
    return std::pair{fmt::format("wait bucket {}", bucket),
                     nlohmann::json{{"bucket", bucket}, {"sequence", work.sequence()}}};
  });
}

void GradientReducer::drain(Slot& slot) {
  if (!slot.bucket) return;
  const BucketPlacement& bucket = plan_.bucket(*slot.bucket);
  wait(*slot.bucket, slot.work);
  std::size_t offset = all_reduce_ ? 0 : plan_.bucket_rank_offset(*slot.bucket, comm_.rank());
  BufferView shard_range = grad_shard_.slice(bucket.shard_offset, bucket.rank_chunk_numel);
  BufferView reduced = slot.buffer.slice(offset, bucket.rank_chunk_numel);
  // Stage 0 reduces once per step and its shard may hold the blocks' accumulated gradients (the
  // buckets were packed from them): the average replaces them. Stages 1-3 add into the shard, which
  // sums the micro batches at stages 2 and 3.
  if (all_reduce_)
    convert_copy(shard_range, reduced, compute_);
  else
    accumulate(shard_range, reduced, compute_);
  landed(*slot.bucket);
  slot.bucket.reset();
  slot.work = Work();
}

void GradientReducer::landed(std::size_t bucket) {
  for (const BucketPiece& piece : plan_.bucket(bucket).pieces)
    if (--unlanded_.at(piece.block) == 0 && landed_) landed_(piece.block);
}

std::vector<std::size_t> GradientReducer::finish() {
  std::vector<std::size_t> packed;
  for (; !deferred_.empty(); deferred_.pop_front()) pack_rows_piece(deferred_.front(), packed);
  for (std::size_t b = 0; b < pending_.size(); ++b)
    if (pending_[b] != 0) throw std::logic_error("gradient reducer: backward finished with blocks not reported");
  if (rows_buckets_left_ != 0) throw std::logic_error("gradient reducer: the rows block's buckets were not all packed");
  for (const auto& [bucket, work] : std::exchange(in_place_works_, {})) {
    wait(bucket, work);
    landed(bucket);
  }
  // Drain in launch order: the slot filled first holds the older reduction.
  for (std::size_t i = 0; i < slots_.size(); ++i) drain(slots_[(next_slot_ + i) % slots_.size()]);
  return packed;
}

}  // namespace zt
