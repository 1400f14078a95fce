#include "runtime/trace/trace_session.h"

#include "core/log.h"
#include "runtime/trace/chrome_trace.h"

namespace zt::trace {

TraceSession::TraceSession(StepRange steps, std::filesystem::path file, int rank)
    : steps_(steps), file_(std::move(file)), timeline_(rank) {}

Timeline* TraceSession::begin_step(std::int64_t step, Stream& compute) {
  if (written_ || !steps_.contains(step)) return nullptr;
  timeline_.begin_step(step, compute);
  open_step_ = step;
  traced_any_ = true;
  return &timeline_;
}

void TraceSession::end_step() {
  if (!open_step_) return;
  timeline_.end_step();
  const bool last = *open_step_ == steps_.last;
  open_step_.reset();
  if (last) write();
}

bool TraceSession::finish() {
  const bool written_before = written_;
  if (open_step_) end_step();
  if (traced_any_ && !written_) write();
  return written_ && !written_before;
}

void TraceSession::write() {
  write_chrome_trace(timeline_, file_);
  written_ = true;
  log::progress("wrote the timeline of step(s) {} to {} (open it in https://ui.perfetto.dev or chrome://tracing)",
                steps_.str(), file_.string());
}

}  // namespace zt::trace
