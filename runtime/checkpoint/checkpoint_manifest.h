// manifest.json of a checkpoint: everything besides the shard files that a resume (with any world
// size or ZeRO stage) or an export needs, and the size and CRC32 of every shard file.
//
// The partition is the saving run's: block b's flat parameter (padded) is cut into chunks of
// chunk_numel elements, chunk r belongs to shard rank r, and inside rank r's files it starts at
// element shard_offset. So element i of block b lives in rank (i / chunk_numel)'s files at element
// shard_offset + i % chunk_numel. Stage 0 has one shard rank (every rank held the whole model).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optim/loss_scaler.h"
#include "runtime/data/loader_position.h"

namespace zt::checkpoint {

inline constexpr int kFormatVersion = 1;

struct ShardFileEntry {
  std::string name;  // relative to the checkpoint directory
  int rank = 0;      // shard rank
  std::string kind;  // "master", "exp_avg" or "exp_avg_sq"
  std::uint64_t bytes = 0;
  std::uint32_t crc32 = 0;
};

struct BlockEntry {
  std::string name;
  std::size_t numel = 0;
  std::size_t chunk_numel = 0;
  std::size_t shard_offset = 0;
};

struct Manifest {
  int format_version = kFormatVersion;
  std::int64_t step = 0;             // training steps done
  // The run that wrote it: a random id drawn when a run starts from scratch and kept by every
  // resume. Pruning and `resume: auto` only ever consider the checkpoints of one run. "" in
  // checkpoints written before run ids existed.
  std::string run_id;
  std::int64_t save_index = 0;       // this run's saves counted 1, 2, ... across resumes: the newest is the highest
  std::int64_t optimizer_steps = 0;  // updates applied (steps minus skipped ones)
  int world_size = 0;                // ranks of the saving run
  int zero_stage = 0;
  int shard_ranks = 0;               // ranks whose shards were written: world_size, stage 0: 1
  std::size_t shard_numel = 0;       // elements in every shard file
  std::string config_yaml;           // the saving run's resolved config
  std::vector<BlockEntry> blocks;
  data::LoaderPosition loader;
  LossScaler::State loss_scaler{};
  std::vector<ShardFileEntry> files;
};

nlohmann::ordered_json manifest_to_json(const Manifest& manifest);
// Throws zt::UserError naming `source` and the problem (a missing key, a wrong type, an
// unsupported format version).
Manifest manifest_from_json(const nlohmann::json& json, const std::filesystem::path& source);
nlohmann::ordered_json shard_file_to_json(const ShardFileEntry& entry);
ShardFileEntry shard_file_from_json(const nlohmann::json& json);

}  // namespace zt::checkpoint
