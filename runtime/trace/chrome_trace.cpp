#include "runtime/trace/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "core/error.h"
#include "core/safe_file.h"

namespace zt::trace {
namespace {

constexpr Lane kLanes[] = {Lane::compute, Lane::comm, Lane::host};

// Lanes are numbered from 1 in the order they are drawn; tid 0 would read as "the process".
int lane_tid(Lane lane) { return static_cast<int>(lane) + 1; }

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

nlohmann::json metadata(int rank, const char* name, int tid, nlohmann::json args) {
  nlohmann::json event = {{"ph", "M"}, {"name", name}, {"pid", rank}, {"args", std::move(args)}};
  if (tid >= 0) event["tid"] = tid;
  return event;
}

}  // namespace

nlohmann::json chrome_trace(int rank, const std::vector<Span>& spans, Clock::time_point origin) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(metadata(rank, "process_name", -1, {{"name", fmt::format("rank {}", rank)}}));
  events.push_back(metadata(rank, "process_sort_index", -1, {{"sort_index", rank}}));
  for (Lane lane : kLanes) {
    events.push_back(metadata(rank, "thread_name", lane_tid(lane), {{"name", lane_name(lane)}}));
    events.push_back(metadata(rank, "thread_sort_index", lane_tid(lane), {{"sort_index", lane_tid(lane)}}));
  }
  // In time order, enclosing spans before the spans they enclose: the file reads like the timeline.
  std::vector<const Span*> ordered;
  for (const Span& span : spans) ordered.push_back(&span);
  std::stable_sort(ordered.begin(), ordered.end(), [](const Span* a, const Span* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end > b->end;
  });
  for (const Span* span_ptr : ordered) {
    const Span& span = *span_ptr;
    events.push_back({{"ph", "X"},
                      {"name", span.name},
                      {"cat", lane_name(span.lane)},
                      {"pid", rank},
                      {"tid", lane_tid(span.lane)},
                      {"ts", micros(span.begin - origin)},
                      // Clamped: a device span can come out a few ns negative from event rounding.
                      {"dur", std::max(0.0, micros(span.end - span.begin))},
                      {"args", span.args}});
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(Timeline& timeline, const std::filesystem::path& file) {
  nlohmann::json document = chrome_trace(timeline.rank(), timeline.resolve(), timeline.origin());
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  // Renamed into place: a link planted at the trace's name is replaced, never written through.
  write_file_atomically(file, document.dump() + '\n');
}

}  // namespace zt::trace
