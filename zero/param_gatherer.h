// ZeRO-3 parameter gathering: all-gathers each block's flat parameter from the ranks' shards on
// the comm stream ahead of use, and frees it after use.
//
// A pass (a forward, or a backward) is a known sequence of steps, each needing one or more blocks
// (a block and the block it is tied to). Entering a step makes the compute stream wait for that
// step's gathers (launching any not yet in flight), then launches gathers for the following steps
// while the blocks gathered ahead of use stay within the prefetch budget (in elements; at least
// the next block when the budget is non-zero, none when it is zero). Leaving a step frees its
// blocks unless the next step needs them too, or a later step within the prefetch budget does (a
// block read again soon, like the last layer in forward and then in backward: it stays, taking
// the budget as its prefetch would), or they are persistent (no more elements than the
// persistence threshold: gathered once per optimizer step and kept, like DeepSpeed's
// stage3_param_persistence_threshold). A block that a later step within the pass's first
// `keep_within` steps reads again (a forward: GPT-2's tied embedding, which the LM head reads at
// the forward's end) stays gathered between its reads: gathering it again would cost the whole
// table's all-gather once more per forward (a third of GPT-2 124M's parameters), just before the
// head needs it. It does not count against the prefetch budget; memory_plan.h counts it.
//
// With a group communicator (ZeRO++'s secondary partition, hpZ: zero_hpz_partition_size), a block
// gathered from every rank's shard leaves this rank its group slice of it (the group's i-th rank
// keeps the i-th of group-size equal slices of the padded block), and until the shard changes the
// block is gathered from those slices within the group: one rank's bytes cross the group's link
// instead of the world's, on the group's own comm stream, which no gradient reduction queues on.
// The values gathered are the same bytes either way.
//
// A lookup block's first gather after an optimizer step may be the rows the next batch reads
// (prefetch_rows, first_rows.h): a pass that begins with `first_step_reads_rows` hands its first
// step the block with those rows in place, and gathers the rest of the whole block's pieces
// spread evenly over the following steps (each after that step's own prefetch, so the forward's
// next block goes first on the link), all that remain at the first step that reads the whole
// block. A pass that does not (an evaluation) gathers them at once where the block is first read.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/two_level_all_gather.h"
#include "core/buffer.h"
#include "zero/exposed_time.h"
#include "zero/first_rows.h"
#include "zero/gather_time.h"
#include "zero/partition.h"
#include "zero/shard_optimizer.h"
#include "zero/timeline.h"

namespace zt {

// Whether a block stays gathered from its first gather after an optimizer step to the shard's next
// change (stage3_param_persistence_threshold: blocks of at most that many elements).
bool is_persistent(const PartitionPlan& plan, std::size_t block, std::size_t persistence_threshold);

// Elements of block's slice of the secondary partition for groups of group_size ranks: none for a
// persistent block (it stays gathered from its first gather to the shard's next change).
std::size_t group_slice_numel(const PartitionPlan& plan, std::size_t block, std::size_t persistence_threshold,
                              int group_size);

class ParamGatherer {
 public:
  // Gathers over all ranks go through gather (its communicator's ranks: the shards' owners). Waits
  // of the compute stream for gathers are measured into exposed. group (nullable: no secondary
  // partition) holds consecutive ranks of that communicator; the slices it keeps count as params.
  ParamGatherer(const PartitionPlan& plan, TwoLevelAllGather& gather, Communicator* group, Stream& compute,
                Device device, DType dtype, std::size_t prefetch_numel, std::size_t persistence_threshold,
                ExposedTime& exposed, MemoryTracker& tracker);
  // Gathers still in flight write into buffers about to be freed: waits for them.
  ~ParamGatherer();

  // The rank's shard of the compute-dtype parameters (in shard order) that gathers read from.
  void set_shard(BufferView shard) { shard_ = shard; }
  void begin_pass(std::vector<std::vector<std::size_t>> steps, std::size_t keep_within = 0,
                  bool first_step_reads_rows = false);
  // Launches the gather of elements [begin, begin + count) of every rank's chunk of block before
  // the pass that needs it begins: the optimizer has just updated that part of the shard. A block's
  // pieces, launched in order, make its whole gather (they complete in order on the comm stream),
  // and the next pass's first step finds it gathered.
  void prefetch(std::size_t block, std::size_t begin, std::size_t count);
  // Instead of the whole block: launches the gather of `rows` (packed from this rank's chunk, which
  // the optimizer has just updated), for the next pass's first step (see above); the whole block
  // follows in `pieces` pieces.
  void prefetch_rows(std::size_t block, RowsGather rows, std::size_t pieces);
  // Launches up to `count` of those pieces now (the link is free before the pass).
  void launch_pieces(std::size_t block, std::size_t count);
  // Returns the gathered flat parameter (padded) of each block of step i, in the step's order.
  std::vector<BufferView> enter(std::size_t step);
  void leave(std::size_t step);
  // Frees every gathered block that is not persistent (end of a pass).
  void end_pass();
  // The shard changed (an optimizer step): persistent blocks must be gathered again.
  void invalidate();
  // Times every whole gather of `block` over all ranks into time (not those within the group).
  void time_gathers(std::size_t block, GatherTime* time) {
    timed_block_ = block;
    gather_time_ = time;
  }
  // Collectives completed this pass, for the comm time report.
  std::vector<Work> take_completed_works();
  // Gathers and the waits for them go to timeline from now on; null stops recording.
  void set_timeline(trace::Timeline* timeline) { timeline_ = timeline; }

 private:
  struct Gathered {
    Buffer buffer;
    Work work;
    bool waited = false;  // the compute stream waits for work (so it is ordered after the gather)
    bool from_group = false;
    bool kept = false;    // between two reads within keep_within: not a prefetch
    // Gathered as rows first (prefetch_rows) and not yet whole: the rows' gather, and the pieces
    // of the whole block's gather not launched yet.
    std::optional<RowsGather> rows;
    std::vector<ChunkPiece> remaining;
    std::size_t whole_step = 0;  // the first step that reads the whole block
  };
  void launch(std::size_t block);
  // Launches the gather of [begin, begin + count) of every rank's chunk of block into g.
  void launch_piece(std::size_t block, Gathered& g, std::size_t begin, std::size_t count);
  // Launches the pieces of rows-first blocks due at `step` (see above).
  void continue_whole_gathers(std::size_t step);
  // Waits for a rows-first block's rows and places them in its buffer (the pass's first step).
  void place_rows(std::size_t block, Gathered& g);
  // The compute stream waits for the rows' gather, and their buffers go back to the pool.
  void drop_rows(Gathered& g);
  // Gives a gathered block's memory back to the pool (memory_pool.h): the compute stream is made
  // to wait for its gather first, so that whatever reuses the memory is ordered after it.
  void release(Gathered& gathered);
  void prefetch_after(std::size_t step);
  bool persistent(std::size_t block) const;
  // Whether a step after after_step and before before_step reads block.
  bool read_again(std::size_t block, std::size_t after_step, std::size_t before_step) const;
  std::size_t slice_numel(std::size_t block) const;  // this rank's slice of the block (0: none)
  // After a gather from every rank: keeps this rank's group slice of the block (compute stream).
  void keep_group_slice(std::size_t block, const Gathered& gathered);

  // Records the collectives of an all-gather over all ranks (works_, the timeline) and returns the
  // one that completes it.
  Work note(const TwoLevelAllGather::Issued& issued, const std::string& name, std::size_t block);
  // A gather of elements [begin, begin + count) of block's chunks over all ranks: timed
  // (time_gathers).
  void time_gather(std::size_t block, std::size_t begin, std::size_t count, const TwoLevelAllGather::Issued& issued);

  const PartitionPlan& plan_;
  TwoLevelAllGather& gather_;
  Stream& compute_;
  Device device_;
  DType dtype_;
  std::size_t prefetch_numel_;
  std::size_t persistence_threshold_;
  ExposedTime& exposed_;
  MemoryTracker& tracker_;
  BufferView shard_;
  Communicator* group_;
  Buffer group_slices_;                       // this rank's slice of every non-persistent block
  std::vector<std::size_t> group_offsets_;    // where each block's slice sits in group_slices_
  std::vector<bool> group_slice_current_;     // the slice holds the shard's present values
  std::vector<std::vector<std::size_t>> steps_;
  std::size_t keep_within_ = 0;
  bool first_step_reads_rows_ = false;
  std::vector<std::size_t> held_;  // in use now, and prefetched for a later step's read: leave keeps them
  std::map<std::size_t, Gathered> gathered_;
  std::vector<Work> works_;
  std::size_t timed_block_ = 0;
  GatherTime* gather_time_ = nullptr;
  trace::Timeline* timeline_ = nullptr;
};

}  // namespace zt
