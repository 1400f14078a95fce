#include "zero/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/cpu_stream.h"

namespace zt::trace {

std::string_view lane_name(Lane lane) {
  switch (lane) {
    case Lane::compute: return "compute stream";
    case Lane::comm: return "comm stream";
    case Lane::host: return "host";
  }
  return "?";
}

void Timeline::begin_step(std::int64_t step, Stream& compute) {
  if (in_step_) throw std::logic_error("timeline: begin_step while a step is open");
  Event reference = compute.record();
  reference.synchronize();
  const Clock::time_point now = Clock::now();
  anchors_.push_back({std::move(reference), now});
  if (pending_.empty() && anchors_.size() == 1) origin_ = now;
  step_ = step;
  step_begin_ = now;
  in_step_ = true;
}

void Timeline::end_step() {
  if (!in_step_) throw std::logic_error("timeline: end_step without begin_step");
  add_host_span(Lane::host, fmt::format("step {}", step_), step_begin_, Clock::now(), {{"step", step_}});
  in_step_ = false;
}

std::size_t Timeline::current_anchor() {
  if (anchors_.empty()) throw std::logic_error("timeline: a span reported before the first begin_step");
  return anchors_.size() - 1;
}

void Timeline::add_host_span(Lane lane, std::string name, Clock::time_point begin, Clock::time_point end,
                             nlohmann::json args) {
  pending_.emplace_back(Span{lane, std::move(name), begin, end, std::move(args)});
}

void Timeline::add_stream_span(Lane lane, std::string name, Event begin, Event end, nlohmann::json args) {
  pending_.emplace_back(StreamSpan{lane, std::move(name), std::move(begin), std::move(end), std::move(args),
                                   current_anchor()});
}

void Timeline::add_collective(std::string name, const Work& work, nlohmann::json args) {
  const CollectiveDesc& desc = work.description();
  args["sequence"] = desc.sequence;
  args["elements"] = desc.count;
  args["dtype"] = dtype_name(desc.dtype);
  args["bytes"] = desc.count * dtype_size(desc.dtype);
  pending_.emplace_back(CollectiveSpan{std::move(name), work, std::move(args), current_anchor(), Clock::now()});
}

Clock::time_point Timeline::time_of(const Event& event, std::size_t anchor) const {
  // CPU streams stamp their events when they complete; that is already the host clock.
  if (CpuEventState* cpu = as_cpu_event(event)) return cpu->completed_at();
  event.synchronize();
  const DeviceAnchor& reference = anchors_.at(anchor);
  const std::chrono::duration<double, std::milli> since(event.elapsed_ms_since(reference.event));
  return reference.host + std::chrono::duration_cast<Clock::duration>(since);
}

std::vector<Span> Timeline::resolve() {
  std::vector<Span> spans;
  spans.reserve(pending_.size());
  for (Pending& pending : pending_) {
    if (auto* span = std::get_if<Span>(&pending)) {
      spans.push_back(*span);
    } else if (auto* stream_span = std::get_if<StreamSpan>(&pending)) {
      spans.push_back({stream_span->lane, stream_span->name, time_of(stream_span->begin, stream_span->anchor),
                       time_of(stream_span->end, stream_span->anchor), stream_span->args});
    } else {
      auto& collective = std::get<CollectiveSpan>(pending);
      const Work& work = collective.work;
      Clock::time_point end = time_of(work.event(), collective.anchor);
      std::optional<Clock::time_point> begin;
      if (work.started_event().state()) {
        begin = time_of(work.started_event(), collective.anchor);
      } else {
        begin = work.started_at();
      }
      if (!begin) continue;
      spans.push_back({Lane::comm, collective.name, *begin, end, collective.args});
      // The launch is stamped when the engine reports it, just after the call returned; a comm
      // stream that was idle may have started the collective a moment before that.
      const double queued_us = std::chrono::duration<double, std::micro>(*begin - collective.launched).count();
      spans.back().args["queued_us"] = std::max(0.0, queued_us);
    }
  }
  return spans;
}

void record_parts(const TwoLevelAllGather::Issued& issued, std::string_view name, const nlohmann::json& args,
                  std::vector<Work>& works, Timeline* timeline) {
  for (const auto& [label, work] : issued.parts) {
    works.push_back(work);
    if (timeline) timeline->add_collective(std::string(name) + std::string(label), work, args);
  }
}

}  // namespace zt::trace
