// Writing a sharded checkpoint, collectively: every rank writes its own shard files, rank 0 the
// manifest and the COMPLETE marker (see checkpoint_directory.h for the atomic rename and
// docs/checkpoints.md for the layout).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "models/model.h"
#include "runtime/data/loader_position.h"
#include "zero/engine.h"

namespace zt::checkpoint {

struct SaveRequest {
  std::filesystem::path root;  // checkpoint.dir; the checkpoint goes to root/step_<step>
  std::int64_t step = 0;
  std::string config_yaml;     // the resolved config of this run
  data::LoaderPosition loader;  // where the training data continues (the same on every rank)
  int rank = 0;
  int world_size = 1;
  std::function<void()> barrier;  // returns once every rank called it
  std::int64_t keep_last = 0;     // prune this run's older saves afterwards (0: keep all)
  std::string run_id;             // the run saving (see Manifest::run_id)
  std::int64_t save_index = 0;    // this save's number in the run's save order
  // Runs on each writing rank after its shard files are on disk, before the manifest. A test makes
  // it throw to leave a partial checkpoint behind (whole processes are crashed at that point by
  // tests/support/crash_on_open.c instead).
  std::function<void()> after_shard_files;
};

struct SaveResult {
  std::filesystem::path dir;
  std::uint64_t bytes = 0;  // all files of the checkpoint
  double seconds = 0.0;     // on rank 0, from the first file to the rename
};

// Collective: every rank of the run calls it with the same step. Returns once the checkpoint is
// complete on disk (rank 0 also pruned the old ones).
SaveResult save_checkpoint(ZeroEngine& engine, const models::Model& model, const SaveRequest& request);

}  // namespace zt::checkpoint
