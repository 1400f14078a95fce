#include "comm/flight_recorder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <chrono>
#include <sstream>

namespace zt {
namespace {

constexpr std::string_view kHeader = "zerotrain flight record 1";
// A live rank rewrites its record at least every second (watchdog.cpp): one much older than that
// belongs to a process that stopped running.
constexpr std::int64_t kStaleRecordMs = 3000;

template <typename Int>
std::optional<Int> parse_int(std::string_view text) {
  Int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<FlightState> parse_state(std::string_view text) {
  for (FlightState state : {FlightState::issued, FlightState::started, FlightState::completed})
    if (flight_state_name(state) == text) return state;
  return std::nullopt;
}

std::string seconds_text(std::int64_t ms) { return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000.0); }

}  // namespace

std::string_view flight_state_name(FlightState state) {
  switch (state) {
    case FlightState::issued: return "issued";
    case FlightState::started: return "started";
    case FlightState::completed: return "completed";
  }
  return "unknown";
}

void FlightRecorder::record(std::shared_ptr<detail::WorkState> work) {
  std::lock_guard lock(mutex_);
  works_.push_back(std::move(work));
  if (works_.size() > kCapacity) works_.pop_front();
}

std::vector<FlightEntry> FlightRecorder::entries() const {
  std::lock_guard lock(mutex_);
  std::vector<FlightEntry> entries;
  for (const auto& work : works_) {
    FlightState state = FlightState::issued;
    bool done = true;
    try {
      done = work->done.query();
    } catch (...) {
      // A failed collective is over, too; its error is the Work's to report.
    }
    if (done) state = FlightState::completed;
    else if (work->started()) state = FlightState::started;
    entries.push_back({work->desc.sequence, state, work->desc.str()});
  }
  return entries;
}

std::string flight_record_text(const FlightRecord& record) {
  std::string text = fmt::format("{}\nrank {} written_ms {}\n", kHeader, record.rank, record.written_ms);
  for (const FlightEntry& e : record.entries)
    text += fmt::format("{} {} {}\n", e.sequence, flight_state_name(e.state), e.what);
  return text;
}

std::optional<FlightRecord> parse_flight_record(std::string_view text) {
  std::istringstream lines{std::string(text)};
  std::string line;
  if (!std::getline(lines, line) || line != kHeader) return std::nullopt;
  FlightRecord record;
  {
    if (!std::getline(lines, line)) return std::nullopt;
    std::istringstream words(line);
    std::string rank_word, rank, written_word, written;
    words >> rank_word >> rank >> written_word >> written;
    std::optional<int> r = parse_int<int>(rank);
    std::optional<std::int64_t> w = parse_int<std::int64_t>(written);
    if (rank_word != "rank" || written_word != "written_ms" || !r || !w) return std::nullopt;
    record.rank = *r;
    record.written_ms = *w;
  }
  while (std::getline(lines, line)) {
    const std::size_t first = line.find(' ');
    const std::size_t second = first == std::string::npos ? first : line.find(' ', first + 1);
    if (second == std::string::npos) return std::nullopt;
    std::optional<std::uint64_t> sequence = parse_int<std::uint64_t>(std::string_view(line).substr(0, first));
    std::optional<FlightState> state = parse_state(std::string_view(line).substr(first + 1, second - first - 1));
    if (!sequence || !state) return std::nullopt;
    record.entries.push_back({*sequence, *state, line.substr(second + 1)});
  }
  return record;
}

std::string describe_entries(const std::vector<FlightEntry>& entries) {
  if (entries.empty()) return "none";
  std::string text;
  for (const FlightEntry& e : entries)
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", e.what, flight_state_name(e.state));
  return text;
}

std::string describe_peers(std::uint64_t timed_out_sequence, std::string_view timed_out_what, int my_rank,
                           const std::vector<std::optional<FlightRecord>>& records, std::int64_t now_ms) {
  std::vector<std::string> missing_ranks, details;
  for (int r = 0; r < static_cast<int>(records.size()); ++r) {
    if (r == my_rank) continue;
    const std::optional<FlightRecord>& record = records[static_cast<std::size_t>(r)];
    if (!record) {
      details.push_back(fmt::format("rank {} left no flight record", r));
      continue;
    }
    const std::int64_t age_ms = now_ms - record->written_ms;
    const std::string stale =
        age_ms > kStaleRecordMs
            ? fmt::format(", and its record was last written {} ago: the process stopped running then", seconds_text(age_ms))
            : "";
    bool reached = false;
    for (const FlightEntry& e : record->entries)
      reached = reached || (e.sequence >= timed_out_sequence && e.state != FlightState::issued);
    if (reached) {
      if (!stale.empty()) details.push_back(fmt::format("rank {} reached it{}", r, stale));
      continue;
    }
    missing_ranks.push_back(std::to_string(r));
    const std::string last = record->entries.empty()
                                  ? std::string("no collective yet")
                                  : fmt::format("{} {}", record->entries.back().what,
                                                flight_state_name(record->entries.back().state));
    details.push_back(fmt::format("rank {} never reached it; its last recorded collective: {}{}", r, last, stale));
  }
  std::string text = missing_ranks.empty()
                         ? fmt::format("every rank with a record reached {}", timed_out_what)
                         : fmt::format("rank(s) that never reached {}: {}", timed_out_what,
                                       fmt::format("{}", fmt::join(missing_ranks, ", ")));
  for (const std::string& detail : details) text += "; " + detail;
  return text;
}

std::filesystem::path flight_record_file(const std::filesystem::path& dir, std::string_view comm_name, int rank) {
  return dir / fmt::format("{}.rank{:05}.txt", comm_name, rank);
}

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace zt
