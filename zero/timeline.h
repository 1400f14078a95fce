// A timeline of what one rank did during the traced steps: compute-stream work (each block's
// forward and backward, the optimizer step), comm-stream collectives (every bucket reduction,
// every parameter all-gather) and host waits (exposed communication, data loading, evaluation).
//
// Spans are recorded cheaply while training (events and host time points; nothing waits) and put
// on the host's steady_clock only when the trace is resolved, after the steps: a CPU event carries
// its completion time; a CUDA event is placed by its elapsed time from a reference event recorded
// (and waited for) at the start of its step, whose host time is known.
//
// Code that reports to a timeline holds a `Timeline*` that is null outside the traced steps, so
// the cost of tracing when it is off is one pointer test per span.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/two_level_all_gather.h"
#include "comm/work.h"
#include "core/stream.h"

namespace zt::trace {

using Clock = std::chrono::steady_clock;

// Where a span is drawn: one row ("thread" in the Trace Event Format) per lane.
enum class Lane { compute, comm, host };
std::string_view lane_name(Lane lane);  // "compute stream", "comm stream", "host"

struct Span {
  Lane lane = Lane::host;
  std::string name;
  Clock::time_point begin;
  Clock::time_point end;
  nlohmann::json args = nlohmann::json::object();
};

class Timeline {
 public:
  explicit Timeline(int rank) : rank_(rank) {}
  int rank() const { return rank_; }

  // Starts a traced step: records (and waits for) the reference event that this step's device
  // events are timed from. The compute stream should be idle, as it is between steps.
  void begin_step(std::int64_t step, Stream& compute);
  // Ends the current step: adds the "step N" span on the host lane.
  void end_step();

  // A span whose times the host measured itself.
  void add_host_span(Lane lane, std::string name, Clock::time_point begin, Clock::time_point end,
                     nlohmann::json args = nlohmann::json::object());
  // The work enqueued on a stream between two events recorded on it.
  void add_stream_span(Lane lane, std::string name, Event begin, Event end,
                       nlohmann::json args = nlohmann::json::object());
  // A collective on the comm lane, from its start to its completion on the comm stream; call it
  // right after launching the collective. args get the collective's sequence number, element
  // count, dtype and bytes, and queued_us: how long it waited on the comm stream between its
  // launch (now) and its start, behind the producer's work and earlier collectives.
  void add_collective(std::string name, const Work& work, nlohmann::json args = nlohmann::json::object());

  // Waits for every event recorded so far and returns every span on the host clock, in the order
  // they were added. Collectives that never started (failed before) are left out.
  std::vector<Span> resolve();
  // The host time of the first traced step's start: time 0 of the written trace.
  Clock::time_point origin() const { return origin_; }

 private:
  struct DeviceAnchor {  // a device event and the host time it completed at
    Event event;
    Clock::time_point host;
  };
  struct StreamSpan {
    Lane lane;
    std::string name;
    Event begin, end;
    nlohmann::json args;
    std::size_t anchor;
  };
  struct CollectiveSpan {
    std::string name;
    Work work;
    nlohmann::json args;
    std::size_t anchor;
    Clock::time_point launched;
  };
  using Pending = std::variant<Span, StreamSpan, CollectiveSpan>;
  std::size_t current_anchor();
  Clock::time_point time_of(const Event& event, std::size_t anchor) const;

  int rank_;
  std::vector<DeviceAnchor> anchors_;  // one per traced step
  std::vector<Pending> pending_;
  std::int64_t step_ = 0;
  Clock::time_point step_begin_;
  Clock::time_point origin_;
  bool in_step_ = false;
};

// Each part of an all-gather issued in parts (TwoLevelAllGather's levels; one part on a flat ring):
// its Work into `works`, for the step's comm time, and with a timeline its span, named `name`
// followed by the part's label. Call it right after issuing the all-gather.
void record_parts(const TwoLevelAllGather::Issued& issued, std::string_view name, const nlohmann::json& args,
                  std::vector<Work>& works, Timeline* timeline);

}  // namespace zt::trace
