#include "zero/shard_optimizer.h"

#include <algorithm>
#include <stdexcept>

#include "core/device_ops.h"
#include "optim/optimizer_ops.h"

namespace zt {
void upload_f32(BufferView dst, const float* host, Stream& stream, MemoryTracker& tracker) {
  Buffer staging = Buffer::host(dst.dtype, dst.numel, MemCategory::workspace, Buffer::HostMemory::pageable, tracker);
  convert_host(host, DType::f32, staging.data(), dst.dtype, dst.numel);
  copy_async(dst, staging.view(), stream);
  stream.synchronize();
}

void download_f32(BufferView src, Stream& stream, MemoryTracker& tracker, std::vector<float>& values) {
  values.resize(src.numel);  // keeps its memory when the size is the same
  if (src.dtype == DType::f32) {  // straight into the vector: no staging, no conversion
    copy_async({values.data(), values.size(), DType::f32, Device::cpu()}, src, stream);
    stream.synchronize();
    return;
  }
  Buffer staging = Buffer::host(src.dtype, src.numel, MemCategory::workspace, Buffer::HostMemory::pageable, tracker);
  copy_async(staging.view(), src, stream);
  stream.synchronize();
  convert_host(staging.data(), src.dtype, values.data(), DType::f32, src.numel);
}

std::vector<float> download_f32(BufferView src, Stream& stream, MemoryTracker& tracker) {
  std::vector<float> values;
  download_f32(src, stream, tracker, values);
  return values;
}

ShardOptimizer::ShardOptimizer(const models::Model& model, const PartitionPlan& plan, int owner,
                               const ZeroOptions& options, Device device, MemoryTracker& tracker)
    : plan_(plan),
      owner_(owner),
      options_(options),
      tracker_(tracker),
      master_(device, DType::f32, plan.shard_numel(), MemCategory::optimizer, tracker),
      exp_avg_(device, DType::f32, plan.shard_numel(), MemCategory::optimizer, tracker),
      exp_avg_sq_(device, DType::f32, plan.shard_numel(), MemCategory::optimizer, tracker) {
  // Consecutive tensors of an owned range with the same decay rule make one segment.
  for (const OwnedRange& range : owned_ranges()) {
    const std::size_t end = range.begin + range.count;
    for (const models::ParamTensor& t : model.block(range.block).layout().tensors()) {
      const std::size_t lo = std::max(range.begin, t.offset), hi = std::min(end, t.offset + t.numel);
      if (lo >= hi) continue;
      const bool decay =
          t.decay ? (!options.adamw.no_decay_embeddings || !t.embedding) : !options.adamw.no_decay_bias_and_norm;
      Segment* last = segments_.empty() ? nullptr : &segments_.back();
      if (last && last->block == range.block && last->decay == decay && last->block_offset + last->count == lo) {
        last->count += hi - lo;
      } else {
        segments_.push_back({range.block, lo, range.shard_offset + (lo - range.begin), hi - lo, decay});
      }
    }
  }
}

std::vector<OwnedRange> ShardOptimizer::owned_ranges() const {
  std::vector<OwnedRange> ranges;
  for (std::size_t b = 0; b < plan_.blocks().size(); ++b) {
    const PartitionPlan::Chunk chunk = plan_.chunk(b, owner_);
    if (chunk.real > 0) ranges.push_back({b, chunk.begin, chunk.real, plan_.block(b).shard_offset});
  }
  return ranges;
}

void ShardOptimizer::reset(const std::vector<float>& master, Stream& stream) {
  upload_f32(master_.view(), master.data(), stream, tracker_);
  fill_zero(exp_avg_.view(), stream);
  fill_zero(exp_avg_sq_.view(), stream);
}

std::vector<ChunkPiece> chunk_pieces(std::size_t chunk_numel, std::size_t pieces, std::size_t alignment) {
  const std::size_t equal = (chunk_numel + std::max<std::size_t>(1, pieces) - 1) / std::max<std::size_t>(1, pieces);
  const std::size_t unit = std::max<std::size_t>(1, alignment);
  const std::size_t size = (equal + unit - 1) / unit * unit;
  std::vector<ChunkPiece> out;
  for (std::size_t begin = 0; begin < chunk_numel; begin += size) out.push_back({begin, std::min(size, chunk_numel - begin)});
  if (out.empty()) out.push_back({0, 0});  // an empty chunk is still reported once
  return out;
}

std::vector<std::size_t> publish_pieces(const PartitionPlan& plan) {
  std::vector<std::size_t> pieces(plan.blocks().size(), 1);
  const std::size_t bucket = plan.largest_bucket_numel();
  if (bucket == 0 || pieces.empty()) return pieces;
  const std::size_t wanted = (plan.block(0).padded_numel + bucket - 1) / bucket;
  // What chunk_pieces makes of that: equal pieces may need fewer (a chunk of 10 in 6 is 5 of 2).
  pieces[0] = chunk_pieces(plan.block(0).chunk_numel, wanted, plan.chunk_alignment()).size();
  return pieces;
}

void ShardOptimizer::update(BufferView grad_shard, double lr, float multiplier, std::int64_t step,
                            const ParamsOut& params_out, const std::vector<std::size_t>& pieces,
                            const PieceUpdated& piece_updated, Stream& stream, const std::vector<std::size_t>& order) {
  const std::size_t blocks = plan_.blocks().size();
  if (!pieces.empty() && pieces.size() != blocks)
    throw std::invalid_argument("shard optimizer: pieces are per block, or not given");
  if (!order.empty()) {  // refused before anything is updated
    std::vector<bool> listed(blocks, false);
    for (std::size_t block : order) {
      if (order.size() != blocks || block >= blocks || listed[block])
        throw std::invalid_argument("shard optimizer: the order must list every block once");
      listed[block] = true;
    }
  }
  if (!std::is_sorted(segments_.begin(), segments_.end(),
                      [](const Segment& a, const Segment& b) { return a.block < b.block; }))
    throw std::logic_error("shard optimizer: segments out of block order");
  OptimizerOps& ops = optimizer_ops(master_.device());
  for (std::size_t i = 0; i < blocks; ++i) {
    const std::size_t block = order.empty() ? i : order[i];
    // The block's segments (they are in block order).
    const auto first = std::lower_bound(segments_.begin(), segments_.end(), block,
                                        [](const Segment& s, std::size_t b) { return s.block < b; });
    const auto last = std::upper_bound(first, segments_.end(), block,
                                       [](std::size_t b, const Segment& s) { return b < s.block; });
    const std::size_t chunk_begin = static_cast<std::size_t>(owner_) * plan_.block(block).chunk_numel;
    for (const ChunkPiece& piece :
         chunk_pieces(plan_.block(block).chunk_numel, pieces.empty() ? 1 : pieces[block], plan_.chunk_alignment())) {
      // This rank's elements of the piece, in block offsets; a segment may span several pieces.
      const std::size_t lo = chunk_begin + piece.begin, hi = lo + piece.count;
      for (auto s = first; s != last; ++s) {
        const std::size_t from = std::max(lo, s->block_offset), to = std::min(hi, s->block_offset + s->count);
        if (from >= to) continue;
        const std::size_t shard_offset = s->shard_offset + (from - s->block_offset);
        AdamWStep update;
        update.master = master_.data_as<float>() + shard_offset;
        update.exp_avg = exp_avg_.data_as<float>() + shard_offset;
        update.exp_avg_sq = exp_avg_sq_.data_as<float>() + shard_offset;
        update.grad = grad_shard.as<float>() + shard_offset;
        update.params_out = params_out(block, from, shard_offset, to - from);
        update.params_dtype = options_.compute_dtype;
        update.count = to - from;
        update.step = step;
        update.grad_multiplier = multiplier;
        update.hyper = options_.adamw.hyper(lr);
        if (!s->decay) update.hyper.weight_decay = 0.0f;
        ops.adamw(update, stream);
      }
      if (piece_updated) piece_updated(block, piece.begin, piece.count);
    }
  }
}

void ShardOptimizer::download(Stream& stream, HostState& into) const {
  download_f32(master_.view(), stream, tracker_, into.master);
  download_f32(exp_avg_.view(), stream, tracker_, into.exp_avg);
  download_f32(exp_avg_sq_.view(), stream, tracker_, into.exp_avg_sq);
}

ShardOptimizer::HostState ShardOptimizer::download(Stream& stream) const {
  HostState state;
  download(stream, state);
  return state;
}

std::vector<float> ShardOptimizer::load(ShardSource& source, Stream& stream) {
  // Padding stays zero, as reset() leaves it: AdamW never touches it.
  std::vector<float> master(plan_.shard_numel(), 0.0f), exp_avg(master.size(), 0.0f), exp_avg_sq(master.size(), 0.0f);
  for (const OwnedRange& r : owned_ranges())
    source.read(r.block, r.begin, r.count, master.data() + r.shard_offset, exp_avg.data() + r.shard_offset,
                exp_avg_sq.data() + r.shard_offset);
  upload_f32(master_.view(), master.data(), stream, tracker_);
  upload_f32(exp_avg_.view(), exp_avg.data(), stream, tracker_);
  upload_f32(exp_avg_sq_.view(), exp_avg_sq.data(), stream, tracker_);
  return master;
}

}  // namespace zt
