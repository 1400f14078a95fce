#include "zero/param_gatherer.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/device_ops.h"

namespace zt {

bool is_persistent(const PartitionPlan& plan, std::size_t block, std::size_t persistence_threshold) {
  return plan.block(block).numel <= persistence_threshold;
}

std::size_t group_slice_numel(const PartitionPlan& plan, std::size_t block, std::size_t persistence_threshold,
                              int group_size) {
  if (group_size <= 1 || is_persistent(plan, block, persistence_threshold)) return 0;
  return plan.block(block).padded_numel / static_cast<std::size_t>(group_size);
}

ParamGatherer::ParamGatherer(const PartitionPlan& plan, TwoLevelAllGather& gather, Communicator* group, Stream& compute,
                             Device device, DType dtype, std::size_t prefetch_numel, std::size_t persistence_threshold,
                             ExposedTime& exposed, MemoryTracker& tracker)
    : plan_(plan),
      gather_(gather),
      compute_(compute),
      device_(device),
      dtype_(dtype),
      prefetch_numel_(prefetch_numel),
      persistence_threshold_(persistence_threshold),
      exposed_(exposed),
      tracker_(tracker),
      group_(group) {
  if (!group_) return;
  std::size_t total = 0;
  for (std::size_t b = 0; b < plan_.blocks().size(); ++b) {
    group_offsets_.push_back(total);
    total += slice_numel(b);
  }
  group_slices_ = Buffer(device_, dtype_, total, MemCategory::params, compute_, tracker_);
  group_slice_current_.assign(plan_.blocks().size(), false);
}

ParamGatherer::~ParamGatherer() {
  for (const auto& entry : gathered_) {
    wait_before_freeing(entry.second.work);
    if (entry.second.rows) wait_before_freeing(entry.second.rows->work);
  }
}

bool ParamGatherer::persistent(std::size_t block) const { return is_persistent(plan_, block, persistence_threshold_); }

std::size_t ParamGatherer::slice_numel(std::size_t block) const {
  return group_slice_numel(plan_, block, persistence_threshold_, group_ ? group_->world_size() : 1);
}

void ParamGatherer::launch(std::size_t block) {
  if (gathered_.contains(block)) return;
  const BlockPlacement& placement = plan_.block(block);
  // The all-gather overwrites every element: no zero fill needed beyond the pool's own.
  Gathered g;
  g.buffer = Buffer(device_, dtype_, placement.padded_numel, MemCategory::gathered, compute_, tracker_);
  g.from_group = group_ && group_slice_current_[block];
  if (g.from_group) {
    const BufferView slice = group_slices_.slice(group_offsets_[block], slice_numel(block));
    g.work = group_->all_gather(slice, g.buffer.view(), compute_);
    works_.push_back(g.work);
    if (timeline_)
      timeline_->add_collective(fmt::format("all_gather block {} in group", block), g.work,
                                {{"block", block}, {"group", true}});
  } else {
    const TwoLevelAllGather::Issued issued =
        gather_.all_gather(shard_.slice(placement.shard_offset, placement.chunk_numel), g.buffer.view(), compute_);
    time_gather(block, 0, placement.chunk_numel, issued);
    g.work = note(issued, fmt::format("all_gather block {}", block), block);
  }
  gathered_.emplace(block, std::move(g));
}

Work ParamGatherer::note(const TwoLevelAllGather::Issued& issued, const std::string& name, std::size_t block) {
  trace::record_parts(issued, name, {{"block", block}, {"group", false}}, works_, timeline_);
  return issued.done;
}

void ParamGatherer::launch_piece(std::size_t block, Gathered& g, std::size_t begin, std::size_t count) {
  const BlockPlacement& placement = plan_.block(block);
  const int ranks = gather_.communicator().world_size();
  const TwoLevelAllGather::Issued issued =
      gather_.all_gather(shard_.slice(placement.shard_offset + begin, count),
                         chunk_parts(g.buffer.view(), placement.chunk_numel, ranks, begin, count), compute_);
  time_gather(block, begin, count, issued);
  g.work = note(issued, fmt::format("all_gather block {} [{}, {})", block, begin, begin + count), block);
}

void ParamGatherer::time_gather(std::size_t block, std::size_t begin, std::size_t count,
                                const TwoLevelAllGather::Issued& issued) {
  if (!gather_time_ || block != timed_block_) return;
  gather_time_->add(issued, begin, count, plan_.block(block).chunk_numel);
}

void ParamGatherer::prefetch(std::size_t block, std::size_t begin, std::size_t count) {
  const BlockPlacement& placement = plan_.block(block);
  if (begin == 0 && count == placement.chunk_numel) return launch(block);
  auto it = gathered_.find(block);
  if (it == gathered_.end()) {
    it = gathered_.emplace(block, Gathered{}).first;
    it->second.buffer = Buffer(device_, dtype_, placement.padded_numel, MemCategory::gathered, compute_, tracker_);
  }
  launch_piece(block, it->second, begin, count);
}

void ParamGatherer::prefetch_rows(std::size_t block, RowsGather rows, std::size_t pieces) {
  if (gathered_.contains(block)) throw std::logic_error("first rows: the block is gathered already");
  const BlockPlacement& placement = plan_.block(block);
  rows.work = note(gather_.all_gather(rows.packed.view(), rows.parts.view(), compute_),
                   fmt::format("all_gather block {} rows", block), block);
  Gathered g;
  g.buffer = Buffer(device_, dtype_, placement.padded_numel, MemCategory::gathered, compute_, tracker_);
  g.rows = std::move(rows);
  g.remaining = chunk_pieces(placement.chunk_numel, std::max<std::size_t>(1, pieces), plan_.chunk_alignment());
  gathered_.emplace(block, std::move(g));
}

void ParamGatherer::launch_pieces(std::size_t block, std::size_t count) {
  Gathered& g = gathered_.at(block);
  count = std::min(count, g.remaining.size());
  for (std::size_t i = 0; i < count; ++i) launch_piece(block, g, g.remaining[i].begin, g.remaining[i].count);
  g.remaining.erase(g.remaining.begin(), g.remaining.begin() + static_cast<std::ptrdiff_t>(count));
}

void ParamGatherer::begin_pass(std::vector<std::vector<std::size_t>> steps, std::size_t keep_within,
                               bool first_step_reads_rows) {
  steps_ = std::move(steps);
  keep_within_ = std::min(keep_within, steps_.size());
  first_step_reads_rows_ = first_step_reads_rows;
  held_.clear();
  for (auto& [block, g] : gathered_) {
    if (!g.rows) continue;
    const std::size_t first_whole = first_step_reads_rows ? 1 : 0;
    g.whole_step = steps_.size();
    for (std::size_t step = first_whole; step < steps_.size(); ++step)
      if (std::find(steps_[step].begin(), steps_[step].end(), block) != steps_[step].end()) {
        g.whole_step = step;
        break;
      }
  }
}

bool ParamGatherer::read_again(std::size_t block, std::size_t after_step, std::size_t before_step) const {
  for (std::size_t later = after_step + 1; later < std::min(before_step, steps_.size()); ++later)
    if (std::find(steps_[later].begin(), steps_[later].end(), block) != steps_[later].end()) return true;
  return false;
}

std::vector<BufferView> ParamGatherer::enter(std::size_t step) {
  for (std::size_t block : steps_.at(step)) launch(block);
  prefetch_after(step);
  continue_whole_gathers(step);
  std::vector<BufferView> views;
  for (std::size_t block : steps_[step]) {
    Gathered& g = gathered_.at(block);
    if (g.rows && step == 0 && first_step_reads_rows_) {
      place_rows(block, g);
      views.push_back(g.buffer.view());
      continue;
    }
    if (g.rows) drop_rows(g);  // whole now: its last piece was launched above
    g.waited = true;
    g.kept = false;
    exposed_.wait(g.work, compute_, timeline_, [&] {
      return std::pair{fmt::format("wait gather block {}", block),
                       nlohmann::json{{"block", block}, {"sequence", g.work.sequence()}}};
    });
    keep_group_slice(block, g);
    views.push_back(g.buffer.view());
  }
  return views;
}

void ParamGatherer::continue_whole_gathers(std::size_t step) {
  for (auto& [block, g] : gathered_) {
    if (!g.rows || g.remaining.empty() || (step == 0 && first_step_reads_rows_)) continue;
    const std::size_t steps_left = g.whole_step > step ? g.whole_step - step : 1;
    launch_pieces(block, (g.remaining.size() + steps_left - 1) / steps_left);
  }
}

void ParamGatherer::place_rows(std::size_t block, Gathered& g) {
  RowsGather& r = *g.rows;
  if (r.placed) return;
  // The pieces launched behind the rows before the pass write the same buffer: they are waited for
  // too, so that placing and the lookup never run beside a write (of the same values).
  for (const Work* work : {&r.work, &g.work}) {
    exposed_.wait(*work, compute_, timeline_, [&] {
      return std::pair{fmt::format("wait gather block {} rows", block),
                       nlohmann::json{{"block", block}, {"sequence", work->sequence()}}};
    });
  }
  r.place(g.buffer.data());
}

void ParamGatherer::drop_rows(Gathered& g) {
  if (!g.rows->placed) g.rows->work.wait(compute_);  // its buffers' memory is reused in the compute stream's order
  g.rows.reset();
}

void ParamGatherer::keep_group_slice(std::size_t block, const Gathered& gathered) {
  const std::size_t numel = slice_numel(block);
  if (numel == 0 || gathered.from_group || group_slice_current_[block]) return;
  const std::size_t mine = static_cast<std::size_t>(group_->rank()) * numel;
  copy_async(group_slices_.slice(group_offsets_[block], numel), gathered.buffer.slice(mine, numel), compute_);
  group_slice_current_[block] = true;
}

void ParamGatherer::prefetch_after(std::size_t step) {
  held_.clear();
  if (prefetch_numel_ == 0) return;
  std::size_t ahead = 0;  // elements gathered (or gathering) for later steps, not for this one
  const std::vector<std::size_t>& current = steps_[step];
  auto in = [](const std::vector<std::size_t>& blocks, std::size_t block) {
    return std::find(blocks.begin(), blocks.end(), block) != blocks.end();
  };
  for (const auto& [block, g] : gathered_)
    if (!in(current, block) && !persistent(block) && !g.kept) ahead += plan_.block(block).padded_numel;
  // A block in use now that leave() would free though a step within reach reads it again: it is
  // held instead, and takes the budget as its prefetch would (once; not a persistent block, nor
  // one the next step reads, nor one kept for a read within keep_within anyway).
  auto freed_after_this_step = [&](std::size_t block) {
    return in(current, block) && !persistent(block) && !read_again(block, step, step + 2) &&
           !read_again(block, step, keep_within_) && !in(held_, block);
  };
  for (std::size_t next = step + 1; next < steps_.size(); ++next) {
    for (std::size_t block : steps_[next]) {
      const std::size_t numel = plan_.block(block).padded_numel;
      const bool present = gathered_.contains(block);
      if (present && !freed_after_this_step(block)) continue;
      if (ahead > 0 && ahead + numel > prefetch_numel_) return;
      if (present) {
        held_.push_back(block);
      } else {
        launch(block);
      }
      if (!persistent(block)) ahead += numel;
    }
  }
}

void ParamGatherer::leave(std::size_t step) {
  for (std::size_t block : steps_.at(step)) {
    if (persistent(block) || read_again(block, step, step + 2)) continue;  // the next step reads it
    auto it = gathered_.find(block);
    if (it == gathered_.end()) continue;
    if (read_again(block, step, keep_within_)) {
      it->second.kept = true;
      continue;
    }
    if (std::find(held_.begin(), held_.end(), block) != held_.end()) continue;  // prefetched for a later read
    release(it->second);
    gathered_.erase(it);
  }
}

void ParamGatherer::end_pass() {
  for (auto it = gathered_.begin(); it != gathered_.end();) {
    if (persistent(it->first)) {
      ++it;
      continue;
    }
    release(it->second);
    it = gathered_.erase(it);
  }
}

void ParamGatherer::invalidate() {
  for (auto& [block, g] : gathered_) release(g);
  gathered_.clear();
  // The next copies into the slices follow the gathers from them on the compute stream (release).
  group_slice_current_.assign(group_slice_current_.size(), false);
}

void ParamGatherer::release(Gathered& gathered) {
  if (gathered.rows) drop_rows(gathered);
  if (!gathered.waited) gathered.work.wait(compute_);  // a prefetch that was never used
  gathered.buffer = Buffer();
}

std::vector<Work> ParamGatherer::take_completed_works() { return std::exchange(works_, {}); }

}  // namespace zt
