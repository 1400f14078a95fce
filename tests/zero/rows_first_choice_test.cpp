// lookup_rows_first: auto's rule (zero/rows_first_choice.h): the whole table where its gather,
// begun after the update's part before it, ends within the update; a tenth of the update to spare
// before the choice turns to the whole table, none to keep it. Every rank's vote counts.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "zero/rows_first_choice.h"

namespace zt {
namespace {

TEST(RowsFirstChoiceRule, TheWholeTableWhereItsGatherEndsWithinTheUpdate) {
  // One rank per host at 1 Gbit/s (bench/README.md): update 600 ms, table gather 330 ms.
  EXPECT_TRUE(whole_table_in_time(330.0, 60.0, 600.0, false));
  // Eight ranks on four hosts: update 480 ms, gather 550 ms: the lookup would wait.
  EXPECT_FALSE(whole_table_in_time(550.0, 50.0, 480.0, false));
  EXPECT_FALSE(whole_table_in_time(550.0, 50.0, 480.0, true));
  // Within a tenth of the update of its end: kept where chosen, not chosen anew.
  EXPECT_FALSE(whole_table_in_time(500.0, 60.0, 600.0, false));
  EXPECT_TRUE(whole_table_in_time(500.0, 60.0, 600.0, true));
  EXPECT_TRUE(whole_table_in_time(480.0, 60.0, 600.0, false));
  EXPECT_FALSE(whole_table_in_time(541.0, 60.0, 600.0, true));
}

TEST(RowsFirstChoiceRule, EveryRankMustVoteForTheWholeTable) {
  EXPECT_TRUE(every_rank_votes_whole_table(std::vector<std::int32_t>{kVoteWholeTable, kVoteWholeTable}));
  EXPECT_FALSE(every_rank_votes_whole_table(std::vector<std::int32_t>{kVoteWholeTable, kVoteRows}));
  EXPECT_FALSE(every_rank_votes_whole_table(std::vector<std::int32_t>{kVoteUnknown, kVoteWholeTable}));
  EXPECT_FALSE(every_rank_votes_whole_table(std::vector<std::int32_t>{}));
  EXPECT_FALSE(every_rank_votes_whole_table(std::vector<std::int32_t>{7}));
}

}  // namespace
}  // namespace zt
