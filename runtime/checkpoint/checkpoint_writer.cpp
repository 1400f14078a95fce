#include "runtime/checkpoint/checkpoint_writer.h"

#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/checkpoint/checkpoint_file_io.h"
#include "runtime/checkpoint/checkpoint_manifest.h"
#include "core/error.h"
#include "core/log.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little, "shard files are little-endian fp32, written as in memory");

std::string rank_entries_name(int rank) { return fmt::format("rank_{:05}.files.json", rank); }
// Left by a rank whose background writes failed, with why: rank 0 stops waiting for its files.
std::string rank_failure_name(int rank) { return fmt::format("rank_{:05}.failed", rank); }

// This rank's three shard files, then the list of them (with CRCs) for rank 0 to merge, renamed
// into place last: its presence says the shard files are complete.
void write_shard_files(const ZeroEngine::OptimizerShard& shard, const fs::path& dir, int shard_rank) {
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (auto [kind, values] : {std::pair<std::string, const std::vector<float>*>{"master", &shard.master},
                              {"exp_avg", &shard.exp_avg},
                              {"exp_avg_sq", &shard.exp_avg_sq}}) {
    ShardFileEntry entry{shard_file_name(shard_rank, kind), shard_rank, kind, values->size() * sizeof(float), 0};
    entry.crc32 = write_file_synced(dir / entry.name, std::as_bytes(std::span(*values)));
    entries.push_back(shard_file_to_json(entry));
  }
  const fs::path listed = dir / rank_entries_name(shard_rank);
  write_file_synced(fs::path(listed.string() + ".tmp"), entries.dump());
  fs::rename(fs::path(listed.string() + ".tmp"), listed);
}

Manifest make_manifest(ZeroEngine& engine, const models::Model& model, const SaveRequest& request, int shard_ranks) {
  const PartitionPlan& plan = engine.plan();
  Manifest m;
  m.step = request.step;
  m.run_id = request.run_id;
  m.save_index = request.save_index;
  m.optimizer_steps = engine.optimizer_steps();
  m.world_size = request.world_size;
  m.zero_stage = engine.options().stage;
  m.shard_ranks = shard_ranks;
  m.shard_numel = plan.shard_numel();
  m.config_yaml = request.config_yaml;
  for (std::size_t b = 0; b < model.num_blocks(); ++b) {
    const BlockPlacement& p = plan.block(b);
    m.blocks.push_back({model.block(b).name(), p.numel, p.chunk_numel, p.shard_offset});
  }
  m.loader = request.loader;
  m.loss_scaler = engine.loss_scaler().state();
  return m;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Collective: rank 0 creates the partial checkpoint afresh (one left by an earlier crash at this
// very step is removed); every rank returns once it exists. Returns its final and partial paths.
std::pair<fs::path, fs::path> begin_checkpoint(const SaveRequest& request) {
  const fs::path final_dir = request.root / checkpoint_dir_name(request.step);
  const fs::path partial_dir = fs::path(final_dir.string() + kPartialSuffix);
  if (request.rank == 0) {
    fs::remove_all(partial_dir);
    fs::create_directories(partial_dir);
  }
  request.barrier();
  return {final_dir, partial_dir};
}

// Rank 0, once every rank's shard files are listed: the manifest over them, COMPLETE last, the
// rename into place and the pruning of this run's older saves.
void finish_checkpoint(Manifest manifest, const SaveRequest& request, const fs::path& partial_dir,
                       const fs::path& final_dir, SaveResult& result) {
  for (int r = 0; r < manifest.shard_ranks; ++r) {
    const fs::path entries_path = partial_dir / rank_entries_name(r);
    for (const nlohmann::json& entry : nlohmann::json::parse(read_text(entries_path))) {
      manifest.files.push_back(shard_file_from_json(entry));
      result.bytes += manifest.files.back().bytes;
    }
    fs::remove(entries_path);
  }
  const std::string manifest_text = manifest_to_json(manifest).dump(1);
  write_file_synced(partial_dir / kManifestFile, manifest_text);
  // COMPLETE goes last: a directory holding it holds everything else too.
  write_file_synced(partial_dir / kCompleteFile, fmt::format("step {}\n", request.step));
  result.bytes += manifest_text.size();
  sync_directory(partial_dir);
  fs::remove_all(final_dir);  // an older save of this step (a resumed run passing it again)
  fs::rename(partial_dir, final_dir);
  sync_directory(request.root);
  for (const fs::path& old : prune_checkpoints(request.root, request.keep_last, request.run_id))
    log::info("removed old checkpoint {}", old.string());
}

// Rank 0's background writer: until every rank's list of shard files is in the partial
// checkpoint, a rank's failure note is there, the writer is given up, or the peer timeout passes.
void wait_for_shard_files(const fs::path& partial_dir, int shard_ranks, std::chrono::duration<double> timeout,
                          const std::atomic<bool>& cancelled) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::error_code error;
  for (int r = 0; r < shard_ranks; ++r) {
    while (!fs::exists(partial_dir / rank_entries_name(r), error)) {
      if (fs::exists(partial_dir / rank_failure_name(r), error))
        throw UserError(fmt::format("checkpoint {}: rank {} could not write its shard files: {}", partial_dir.string(),
                                    r, read_text(partial_dir / rank_failure_name(r))));
      if (cancelled) throw UserError(fmt::format("checkpoint {}: given up while waiting for rank {}'s shard files",
                                                 partial_dir.string(), r));
      if (std::chrono::steady_clock::now() > deadline)
        throw UserError(fmt::format("checkpoint {}: rank {}'s shard files did not appear within {:.0f} s "
                                    "(comm.timeout_s); the save was given up",
                                    partial_dir.string(), r, timeout.count()));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace

SaveResult save_checkpoint(ZeroEngine& engine, const models::Model& model, const SaveRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  const auto [final_dir, partial_dir] = begin_checkpoint(request);

  // Stage 0 ranks all hold the whole model: rank 0 alone writes it.
  const int shard_ranks = engine.plan().shards();
  if (request.rank < shard_ranks) {
    write_shard_files(engine.download_optimizer_shard(), partial_dir, engine.shard_rank());
    if (request.after_shard_files) request.after_shard_files();
  }
  request.barrier();

  SaveResult result;
  result.dir = final_dir;
  if (request.rank == 0) {
    finish_checkpoint(make_manifest(engine, model, request, shard_ranks), request, partial_dir, final_dir, result);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  request.barrier();
  return result;
}

void save_checkpoint_async(ZeroEngine& engine, const models::Model& model, const SaveRequest& request,
                           BackgroundCheckpointWriter& writer) {
  if (writer.in_flight()) throw std::logic_error("save_checkpoint_async: a save is still in flight");
  const auto started = std::chrono::steady_clock::now();
  const auto [final_dir, partial_dir] = begin_checkpoint(request);  // nothing below is collective

  // The snapshot: what the files will hold, taken now, before the next step changes it.
  const int shard_ranks = engine.plan().shards();
  const bool writes_shard = request.rank < shard_ranks;
  const std::shared_ptr<ZeroEngine::OptimizerShard> shard = writer.snapshot();
  if (writes_shard) engine.download_optimizer_shard(*shard);
  const int shard_rank = engine.shard_rank();
  std::optional<Manifest> manifest;
  if (request.rank == 0) manifest = make_manifest(engine, model, request, shard_ranks);

  writer.start([=](const std::atomic<bool>& cancelled) {
    SaveResult result;
    result.dir = final_dir;
    if (writes_shard) {
      try {
        write_shard_files(*shard, partial_dir, shard_rank);
        if (request.after_shard_files) request.after_shard_files();
      } catch (const std::exception& e) {
        // Best effort: the note may fail to be written too, and then rank 0 waits its timeout.
        if (request.rank != 0) {
          try {
            write_file_synced(partial_dir / rank_failure_name(shard_rank), std::string_view(e.what()));
          } catch (const std::exception&) {
          }
        }
        throw;
      }
    }
    if (request.rank != 0) return result;
    wait_for_shard_files(partial_dir, shard_ranks, request.peer_timeout, cancelled);
    finish_checkpoint(*manifest, request, partial_dir, final_dir, result);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
  });
}

BackgroundCheckpointWriter::~BackgroundCheckpointWriter() {
  if (!pending_.valid()) return;
  cancelled_->store(true);
  try {
    const SaveResult done = pending_.get();
    log::info("checkpoint {} was completed in the background", done.dir.string());
  } catch (const std::exception& e) {
    log::warn("a checkpoint being written in the background was given up ({}); unless it was already renamed to "
              "its final name, the one before it stays the newest complete checkpoint",
              e.what());
  }
}

bool BackgroundCheckpointWriter::finished() const {
  return pending_.valid() && pending_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

std::optional<SaveResult> BackgroundCheckpointWriter::wait() {
  if (!pending_.valid()) return std::nullopt;
  return pending_.get();
}

void BackgroundCheckpointWriter::start(std::function<SaveResult(const std::atomic<bool>& cancelled)> write) {
  if (pending_.valid()) throw std::logic_error("BackgroundCheckpointWriter: a save is still in flight");
  cancelled_ = std::make_shared<std::atomic<bool>>(false);
  pending_ = std::async(std::launch::async, [write = std::move(write), cancelled = cancelled_] { return write(*cancelled); });
}

}  // namespace zt::checkpoint
