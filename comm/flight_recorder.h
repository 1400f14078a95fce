// A flight recorder per communicator: the last collectives this rank issued on it, each with its
// state (issued, started, completed). When a collective times out, the watchdog reports this
// rank's record and reads its peers' to say which ranks never reached the collective and what
// they did last.
//
// Peers exchange records through small files in a shared directory (CommOptions::
// flight_record_dir), each rewritten by its rank's watchdog thread when the record changes and at
// least every second. Files rather than messages: a rank that is hung hard (stopped by a signal,
// stuck in the kernel) cannot answer a message, but its last file still says what it was doing,
// and the file's age says when it stopped. Reading a few small files never blocks on a peer.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "comm/work.h"

namespace zt {

enum class FlightState : std::uint8_t { issued, started, completed };
std::string_view flight_state_name(FlightState state);

struct FlightEntry {
  std::uint64_t sequence = 0;
  FlightState state = FlightState::issued;
  std::string what;  // CollectiveDesc::str(): "all_reduce(sum) #7: 1000 x f32 (3.91 KiB)"
  bool operator==(const FlightEntry&) const = default;
};

struct FlightRecord {
  int rank = 0;
  std::int64_t written_ms = 0;      // system_clock, ms since the epoch
  std::vector<FlightEntry> entries;  // oldest first
  bool operator==(const FlightRecord&) const = default;
};

class FlightRecorder {
 public:
  static constexpr std::size_t kCapacity = 16;
  void record(std::shared_ptr<detail::WorkState> work);
  std::vector<FlightEntry> entries() const;  // their states now, oldest first

 private:
  mutable std::mutex mutex_;
  std::deque<std::shared_ptr<detail::WorkState>> works_;
};

// The file format: a header line, a line with rank and time, then one line per entry.
std::string flight_record_text(const FlightRecord& record);
std::optional<FlightRecord> parse_flight_record(std::string_view text);

// "#6 all_reduce(sum) ... completed, #7 ... started"
std::string describe_entries(const std::vector<FlightEntry>& entries);

// What the other ranks were doing when `timed_out` timed out on rank `my_rank`: which never reached
// it, with their last collective, and which records are too old to be of a live process.
// records[r] is rank r's record, or nothing when it could not be read.
std::string describe_peers(std::uint64_t timed_out_sequence, std::string_view timed_out_what, int my_rank,
                           const std::vector<std::optional<FlightRecord>>& records, std::int64_t now_ms);

// Where the ranks of one communicator publish their flight records; no dir: not published.
struct FlightRecordFiles {
  std::filesystem::path dir{};
  std::string comm_name{};
  int rank = 0;
  int world_size = 1;
};

// Where rank `rank` of communicator `comm_name` keeps its record under `dir`.
std::filesystem::path flight_record_file(const std::filesystem::path& dir, std::string_view comm_name, int rank);

// Wall-clock milliseconds since the epoch (records of ranks on different hosts compare by it).
std::int64_t unix_ms_now();

}  // namespace zt
