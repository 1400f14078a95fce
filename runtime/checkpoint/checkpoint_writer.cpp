#include "runtime/checkpoint/checkpoint_writer.h"

#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/checkpoint/checkpoint_file_io.h"
#include "runtime/checkpoint/checkpoint_manifest.h"
#include "core/log.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little, "shard files are little-endian fp32, written as in memory");

std::string rank_entries_name(int rank) { return fmt::format("rank_{:05}.files.json", rank); }

// This rank's three shard files, then the list of them (with CRCs) for rank 0 to merge.
void write_shard_files(ZeroEngine& engine, const fs::path& dir, int shard_rank) {
  ZeroEngine::OptimizerShard shard = engine.download_optimizer_shard();
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (auto [kind, values] : {std::pair<std::string, const std::vector<float>*>{"master", &shard.master},
                              {"exp_avg", &shard.exp_avg},
                              {"exp_avg_sq", &shard.exp_avg_sq}}) {
    ShardFileEntry entry{shard_file_name(shard_rank, kind), shard_rank, kind, values->size() * sizeof(float), 0};
    entry.crc32 = write_file_synced(dir / entry.name, std::as_bytes(std::span(*values)));
    entries.push_back(shard_file_to_json(entry));
  }
  write_file_synced(dir / rank_entries_name(shard_rank), entries.dump());
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

}  // namespace

SaveResult save_checkpoint(ZeroEngine& engine, const models::Model& model, const SaveRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  const fs::path final_dir = request.root / checkpoint_dir_name(request.step);
  const fs::path partial_dir = fs::path(final_dir.string() + kPartialSuffix);
  if (request.rank == 0) {
    fs::remove_all(partial_dir);  // left by an earlier crash at this very step
    fs::create_directories(partial_dir);
  }
  request.barrier();

  // Stage 0 ranks all hold the whole model: rank 0 alone writes it.
  const int shard_ranks = engine.plan().shards();
  const bool writes_shard = request.rank < shard_ranks;
  if (writes_shard) {
    write_shard_files(engine, partial_dir, engine.shard_rank());
    if (request.after_shard_files) request.after_shard_files();
  }
  request.barrier();

  SaveResult result;
  result.dir = final_dir;
  if (request.rank == 0) {
    Manifest manifest = make_manifest(engine, model, request, shard_ranks);
    for (int r = 0; r < shard_ranks; ++r) {
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
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (const fs::path& old : prune_checkpoints(request.root, request.keep_last, request.run_id))
      log::info("removed old checkpoint {}", old.string());
  }
  request.barrier();
  return result;
}

}  // namespace zt::checkpoint
