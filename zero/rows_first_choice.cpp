#include "zero/rows_first_choice.h"

#include <algorithm>

#include <fmt/format.h>

namespace zt {

bool whole_table_in_time(double gather_ms, double before_ms, double update_ms, bool whole_now) {
  const double spare = whole_now ? 0.0 : 0.1 * update_ms;
  return before_ms + gather_ms + spare <= update_ms;
}

bool every_rank_votes_whole_table(std::span<const std::int32_t> votes) {
  return !votes.empty() && std::all_of(votes.begin(), votes.end(), [](std::int32_t v) { return v == kVoteWholeTable; });
}

void RowsFirstChoice::update_ran(Event begin, Event end) {
  update_begin_ = std::move(begin);
  update_end_ = std::move(end);
}

std::int32_t RowsFirstChoice::vote(double share_before_table) {
  share_before_table_ = share_before_table;
  // A device may still run the last update: its time counts once it has completed.
  if (update_end_.state() && update_end_.query()) {
    update_ms_ = update_end_.elapsed_ms_since(update_begin_);
    update_begin_ = update_end_ = Event();
  }
  gather_ms_ = table_gather_.latest_ms();
  if (!update_ms_ || !gather_ms_) return kVoteUnknown;
  return whole_table_in_time(*gather_ms_, share_before_table_ * *update_ms_, *update_ms_, whole_table_)
             ? kVoteWholeTable
             : kVoteRows;
}

bool RowsFirstChoice::decide(std::span<const std::int32_t> votes) {
  const bool before = whole_table_;
  whole_table_ = every_rank_votes_whole_table(votes);
  const bool first_measured =
      !measured_ && std::none_of(votes.begin(), votes.end(), [](std::int32_t v) { return v == kVoteUnknown; });
  measured_ = measured_ || first_measured;
  return whole_table_ != before || first_measured;
}

std::string RowsFirstChoice::measured() const {
  if (!update_ms_ || !gather_ms_) return "not measured yet";
  return fmt::format("the table's gather {:.1f} ms, the update {:.1f} ms ({:.1f} ms of it before the table's gather)",
                     *gather_ms_, *update_ms_, share_before_table_ * *update_ms_);
}

}  // namespace zt
