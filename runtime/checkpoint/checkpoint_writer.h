// Writing a sharded checkpoint, collectively: every rank writes its own shard files, rank 0 the
// manifest and the COMPLETE marker (see checkpoint_directory.h for the atomic rename and
// docs/checkpoints.md for the layout).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
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
  // Asynchronous saves: how long rank 0's background writer waits for another rank's shard files
  // before it gives the save up (the job's comm.timeout_s).
  std::chrono::duration<double> peer_timeout{300.0};
};

struct SaveResult {
  std::filesystem::path dir;
  std::uint64_t bytes = 0;  // all files of the checkpoint
  double seconds = 0.0;     // on rank 0, from the first file to the rename
};

// Collective: every rank of the run calls it with the same step. Returns once the checkpoint is
// complete on disk (rank 0 also pruned the old ones).
SaveResult save_checkpoint(ZeroEngine& engine, const models::Model& model, const SaveRequest& request);

// The thread that writes asynchronous saves, one save at a time. A save it has finished stays
// there (result or error) until taken with wait().
class BackgroundCheckpointWriter {
 public:
  BackgroundCheckpointWriter() = default;
  // Gives up a save still in flight (rank 0 stops waiting for other ranks; files being written
  // are finished), and logs it: the checkpoint is left partial, and the one before it stays the
  // newest complete one.
  ~BackgroundCheckpointWriter();
  BackgroundCheckpointWriter(const BackgroundCheckpointWriter&) = delete;
  BackgroundCheckpointWriter& operator=(const BackgroundCheckpointWriter&) = delete;

  bool in_flight() const { return pending_.valid(); }
  // A save was started and has ended, successfully or not: wait() returns at once.
  bool finished() const;
  // Waits for the save in flight and returns its result (rank 0: the complete checkpoint; other
  // ranks: their shard files), or nothing when none was in flight. Rethrows its error.
  std::optional<SaveResult> wait();

  // Starts `write` on a new thread; a save must not be in flight. `write` polls `cancelled`.
  void start(std::function<SaveResult(const std::atomic<bool>& cancelled)> write);

  // The host copy of this rank's shard that a save writes out: one buffer reused by every save
  // (only while none is in flight), so a snapshot is a copy into memory already mapped.
  const std::shared_ptr<ZeroEngine::OptimizerShard>& snapshot() const { return snapshot_; }

 private:
  std::shared_ptr<ZeroEngine::OptimizerShard> snapshot_ = std::make_shared<ZeroEngine::OptimizerShard>();
  std::future<SaveResult> pending_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
};

// Collective like save_checkpoint, but it returns as soon as this rank's share of the state is
// copied to host memory (and rank 0 has the manifest's contents); `writer` (with no save in
// flight) then writes the files with the same protocol: each rank its shard files, rank 0 the
// manifest and COMPLETE once every rank's files are there, then the rename. A rank whose writes
// fail leaves a note in the partial checkpoint, so rank 0 gives up at once instead of at
// request.peer_timeout.
void save_checkpoint_async(ZeroEngine& engine, const models::Model& model, const SaveRequest& request,
                           BackgroundCheckpointWriter& writer);

}  // namespace zt::checkpoint
