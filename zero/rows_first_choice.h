// zero_optimization.lookup_rows_first: auto - whether an update gathers the next lookup's rows
// first (first_rows.h) or the whole table, as it does without the next tokens.
//
// Without rows the table is the first block updated (block order), and its gather begins as soon
// as its first piece is updated. Where that gather ends before the update does, the next forward
// finds the table gathered: the rows would only add their bytes to the link and hold the table's
// gather back until the lookup (with one rank per host, the update of half the model outlasts the
// table's all-gather). Where it ends later, the lookup waits for the rest of the table, while the
// rows (a few percent of it) let the forward start at once, the table following behind the
// forward's next blocks. So each rank measures its last update (on the compute stream) and the
// table's last whole gather (gather_time.h), and votes; the votes ride on the next tokens'
// all-gather (engine.h), so that every rank reads every vote and all choose alike: the whole
// table where every rank's gather ends in time. Both choices read the same values: the choice
// moves time, never a bit.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/stream.h"
#include "zero/gather_time.h"

namespace zt {

// A rank's vote on the next update's table.
inline constexpr std::int32_t kVoteUnknown = -1;  // not measured yet (the first steps)
inline constexpr std::int32_t kVoteRows = 0;
inline constexpr std::int32_t kVoteWholeTable = 1;

// Whether the whole table's gather, beginning once before_ms of the update are done and lasting
// gather_ms, ends by the update's end (update_ms). A choice of the whole table already made holds
// while it does; a new one needs a tenth of the update to spare, so that times near the boundary
// do not flip the choice from step to step.
bool whole_table_in_time(double gather_ms, double before_ms, double update_ms, bool whole_now);

// The choice every rank makes from every rank's vote: the whole table only where all vote for it.
bool every_rank_votes_whole_table(std::span<const std::int32_t> votes);

class RowsFirstChoice {
 public:
  // The table's whole gathers (every one, rows first or not: the same bytes over the same link).
  GatherTime& table_gather() { return table_gather_; }
  // The update's first and last work on the compute stream (read once they have completed).
  void update_ran(Event begin, Event end);
  // This rank's vote from its latest measurements. share_before_table: the part of the update
  // done before the table's gather can begin without rows (the shard's elements updated up to the
  // table's first piece, over all of them).
  std::int32_t vote(double share_before_table);
  // Every rank's votes, the same on every rank: makes the choice and returns whether it changed
  // or is the first that every rank measured for.
  bool decide(std::span<const std::int32_t> votes);
  bool whole_table() const { return whole_table_; }
  // The measurements behind this rank's latest vote, for the log.
  std::string measured() const;

 private:
  double share_before_table_ = 0.0;  // at the latest vote
  GatherTime table_gather_;
  Event update_begin_, update_end_;
  std::optional<double> update_ms_, gather_ms_;
  bool whole_table_ = false;
  bool measured_ = false;  // a choice that every rank measured for was made
};

}  // namespace zt
