// A rank's timeline as a Chrome trace: the JSON Trace Event Format that chrome://tracing and
// https://ui.perfetto.dev open.
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "zero/timeline.h"

namespace zt::trace {

// {"traceEvents": [...]}: complete ("X") events with ts/dur in microseconds from origin, pid =
// rank, tid = lane (1 compute, 2 comm, 3 host), plus process and thread name metadata ("M").
nlohmann::json chrome_trace(int rank, const std::vector<Span>& spans, Clock::time_point origin);

// Resolves the timeline (waiting for its events) and writes its Chrome trace to file, creating
// the directory. Throws zt::UserError when the file cannot be written.
void write_chrome_trace(Timeline& timeline, const std::filesystem::path& file);

}  // namespace zt::trace
