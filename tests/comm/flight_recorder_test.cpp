// The flight record files and the report a timeout builds from them (the multi-rank behaviour is
// comm_failure_stop_names_missing_ranks and tests/reliability/rank_killed_test.sh).
#include <gtest/gtest.h>

#include "comm/flight_recorder.h"

namespace zt {
namespace {

FlightRecord record_of(int rank, std::int64_t written_ms, std::vector<FlightEntry> entries) {
  return FlightRecord{rank, written_ms, std::move(entries)};
}

TEST(FlightRecorder, TextRoundTrip) {
  const FlightRecord record = record_of(3, 1700000000123, {{6, FlightState::completed, "all_reduce(sum) #6: 10 x f32 (40 B)"},
                                                           {7, FlightState::started, "barrier #7: 0 x f32 (0 B)"}});
  EXPECT_EQ(parse_flight_record(flight_record_text(record)), record);
  EXPECT_EQ(parse_flight_record(""), std::nullopt);
  EXPECT_EQ(parse_flight_record("zerotrain flight record 1\nrank x written_ms 5\n"), std::nullopt);
  EXPECT_EQ(parse_flight_record("zerotrain flight record 1\nrank 1 written_ms 5\n7 sleeping all_reduce\n"), std::nullopt);
}

TEST(FlightRecorder, NamesTheRanksThatNeverReachedTheCollective) {
  const std::int64_t now = 1'000'000;
  std::vector<std::optional<FlightRecord>> records = {
      record_of(0, now, {{7, FlightState::started, "all_reduce(sum) #7: 10 x f32 (40 B)"}}),
      record_of(1, now - 500, {{6, FlightState::completed, "all_reduce(sum) #6: 10 x f32 (40 B)"}}),
      record_of(2, now - 200, {{7, FlightState::started, "all_reduce(sum) #7: 10 x f32 (40 B)"}}),
      record_of(3, now - 9000, {{7, FlightState::issued, "all_reduce(sum) #7: 10 x f32 (40 B)"}}),
      std::nullopt,
  };
  EXPECT_EQ(describe_peers(7, "all_reduce(sum) #7: 10 x f32 (40 B)", 0, records, now),
            "rank(s) that never reached all_reduce(sum) #7: 10 x f32 (40 B): 1, 3; "
            "rank 1 never reached it; its last recorded collective: all_reduce(sum) #6: 10 x f32 (40 B) completed; "
            "rank 3 never reached it; its last recorded collective: all_reduce(sum) #7: 10 x f32 (40 B) issued, and its record "
            "was last written 9.0 s ago: the process stopped running then; "
            "rank 4 left no flight record");
}

TEST(FlightRecorder, ARankFrozenInsideTheCollectiveIsNamedByTheAgeOfItsRecord) {
  const std::int64_t now = 1'000'000;
  std::vector<std::optional<FlightRecord>> records = {
      record_of(0, now, {{7, FlightState::started, "x #7"}}),
      record_of(1, now - 6000, {{7, FlightState::started, "x #7"}}),
  };
  EXPECT_EQ(describe_peers(7, "x #7", 0, records, now),
            "every rank with a record reached x #7; rank 1 reached it, and its record was last written 6.0 s ago: "
            "the process stopped running then");
}

TEST(FlightRecorder, DescribesEntriesOldestFirst) {
  EXPECT_EQ(describe_entries({}), "none");
  EXPECT_EQ(describe_entries({{1, FlightState::completed, "a #1"}, {2, FlightState::issued, "b #2"}}),
            "a #1 completed, b #2 issued");
}

}  // namespace
}  // namespace zt
