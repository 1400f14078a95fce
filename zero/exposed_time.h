// The compute stream's stalls on communication during a step: the exposed communication.
//
// Each wait is bracketed by events recorded on the compute stream just before and just after it,
// and the stall is the time between them. On the CPU, where the compute stream is the calling
// thread, that is how long the host blocked; on a GPU it is how long the stream sat idle on the
// device (timing the host call would measure nothing: it returns at once). The events are
// resolved after the step, once they have completed.
#pragma once

#include <chrono>
#include <utility>
#include <vector>

#include "comm/work.h"
#include "core/stream.h"
#include "zero/timeline.h"

namespace zt {

class ExposedTime {
 public:
  // stream waits for work. When timeline records and the collective had not completed yet, the
  // wait goes on its host lane as span(), a (name, args) pair built only then, so that the
  // untraced hot path formats nothing.
  template <typename Span> void wait(const Work& work, Stream& stream, trace::Timeline* timeline, Span span) {
    // Work already complete (or none) cannot stall the stream: it is waited for (its error, if
    // any, still reaches the stream) without the two events, of which a GPU step would otherwise
    // record hundreds that measure nothing.
    if (work.is_completed()) {
      work.wait(stream);
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    const bool blocks = timeline != nullptr;  // not completed: it may block
    Event before = stream.record();
    work.wait(stream);
    waits_.emplace_back(std::move(before), stream.record());
    if (blocks) {
      auto [name, args] = span();
      timeline->add_host_span(trace::Lane::host, std::move(name), start, std::chrono::steady_clock::now(),
                              std::move(args));
    }
  }

  // Waits measured since the last take_ms() (each a pair of events).
  std::size_t measured_waits() const { return waits_.size(); }

  // Milliseconds the stream stalled in the waits since the last call; blocks until their events
  // have completed (after the step's one synchronisation, they have).
  double take_ms() {
    double total = 0.0;
    for (const auto& [before, after] : waits_) total += after.elapsed_ms_since(before);
    waits_.clear();
    return total;
  }

 private:
  std::vector<std::pair<Event, Event>> waits_;
};

}  // namespace zt
