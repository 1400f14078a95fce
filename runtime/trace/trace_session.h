// The traced steps of a training run (`zerotrain train --trace 3:5`) and the file their timeline
// goes to: <run_dir>/trace/rank<R>.json, one per rank.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "runtime/trace/step_range.h"
#include "zero/timeline.h"

namespace zt::trace {

class TraceSession {
 public:
  TraceSession(StepRange steps, std::filesystem::path file, int rank);

  // Starts step `step` and returns the timeline to report it into, or null when the step is not
  // traced (the caller hands the pointer on as is: null means "not recording").
  Timeline* begin_step(std::int64_t step, Stream& compute);
  // Ends the step begun last (a no-op when it was not traced); after the range's last step the
  // trace file is written.
  void end_step();
  // Writes the trace now if steps were traced but the file is not written yet: the run ended
  // inside the range. Returns whether a file was written by this call.
  bool finish();

  const StepRange& steps() const { return steps_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  void write();

  StepRange steps_;
  std::filesystem::path file_;
  Timeline timeline_;
  std::optional<std::int64_t> open_step_;
  bool traced_any_ = false;
  bool written_ = false;
};

}  // namespace zt::trace
