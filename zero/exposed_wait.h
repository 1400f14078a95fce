// Making the compute stream wait for a collective, and measuring what that wait cost.
#pragma once

#include <chrono>
#include <utility>

#include "comm/work.h"
#include "runtime/core/stream.h"
#include "runtime/trace/timeline.h"

namespace zt {

// stream waits for work; returns the milliseconds the host was blocked doing so: the exposed
// communication (on the CPU the compute stream is the calling thread, so that is the whole wait;
// on a GPU the stream waits on the device and the host hardly at all). When timeline records and
// the collective had not completed yet, the wait goes on its host lane as span(), a
// (name, args) pair built only then, so the untraced hot path formats nothing.
template <typename Span>
double wait_exposed(const Work& work, Stream& stream, trace::Timeline* timeline, Span span) {
  const auto start = std::chrono::steady_clock::now();
  const bool blocks = timeline && !work.is_completed();
  work.wait(stream);
  const auto end = std::chrono::steady_clock::now();
  if (blocks) {
    auto [name, args] = span();
    timeline->add_host_span(trace::Lane::host, std::move(name), start, end, std::move(args));
  }
  return std::chrono::duration<double, std::milli>(end - start).count();
}

}  // namespace zt
