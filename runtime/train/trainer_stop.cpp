// The Trainer's early stop: what becomes of the training state when the run guard ends the job
// before its last step (a stop signal, a non-finite loss). The decision itself is run_guard.h's.
#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/train/trainer.h"

namespace zt {

void Trainer::stop_early(const StopRequest& stop) {
  try {
    collect_background_save(true);  // finished before the final save, or named as the last good one
  } catch (const UserError& e) {
    // The stop's own report and exit status matter more; the failed save is said, not rethrown.
    log::error("{}", e.what());
  }
  std::string note;
  if (stop.save_checkpoint() && config_.checkpoint.interval > 0) {
    save_checkpoint(stop.step);  // collective; every rank got the same request
    collect_background_save(true);  // checkpoint.async_save: the final one is complete before the exit
    note = fmt::format("final checkpoint {} written; continue with --resume auto",
                       (checkpoint_root_ / checkpoint::checkpoint_dir_name(stop.step)).string());
  } else {
    // Non-finite gradients were never applied, so the newest checkpoint is the last good state.
    std::optional<std::filesystem::path> last = newest_checkpoint_of_this_run();
    const std::string latest = last ? fmt::format("the last good checkpoint is {}", last->string())
                                    : fmt::format("no checkpoint was saved in {}", checkpoint_root_.string());
    note = stop.save_checkpoint() ? fmt::format("no final checkpoint written (checkpoint.interval is 0); {}", latest)
                                  : latest;
  }
  guard_->stop(stop, note);
}

}  // namespace zt
