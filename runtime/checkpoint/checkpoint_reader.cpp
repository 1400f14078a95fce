#include "runtime/checkpoint/checkpoint_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "runtime/checkpoint/checkpoint_directory.h"
#include "core/error.h"
#include "core/safe_file.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

const char* const kKinds[] = {"master", "exp_avg", "exp_avg_sq"};

nlohmann::json read_manifest_json(const fs::path& path) {
  std::string why;
  const std::optional<std::string> text = read_regular_file(path, why);
  if (!text) throw UserError(fmt::format("cannot read checkpoint manifest {}: {}", path.string(), why));
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(fmt::format("checkpoint manifest {} is not valid JSON: {}", path.string(), e.what()));
  }
}

}  // namespace

CheckpointReader::CheckpointReader(fs::path dir) : dir_(std::move(dir)) {
  if (fs::is_regular_file(dir_))
    throw UserError(fmt::format("{} is a file, not a zerotrain checkpoint (a directory such as "
                                "runs/NAME/checkpoints/step_00000200){}", dir_.string(),
                                dir_.extension() == ".safetensors"
                                    ? "; to start a fresh run from these weights use model.init_from: " + dir_.string()
                                    : ""));
  if (!fs::is_directory(dir_)) throw UserError(fmt::format("checkpoint {} does not exist or is not a directory", dir_.string()));
  if (!fs::exists(dir_ / kCompleteFile) && !fs::exists(dir_ / kManifestFile)) {
    // No shard file either: not an interrupted write but some other kind of directory.
    bool has_shard_files = false;
    for (const auto& entry : fs::directory_iterator(dir_))
      if (entry.path().filename().string().starts_with("rank_") && entry.path().extension() == ".f32") has_shard_files = true;
    const bool hugging_face = fs::exists(dir_ / "config.json") &&
                              (fs::exists(dir_ / "model.safetensors") || fs::exists(dir_ / "model.safetensors.index.json") ||
                               fs::exists(dir_ / "pytorch_model.bin"));
    if (hugging_face || !has_shard_files)
      throw UserError(fmt::format("{} is not a zerotrain checkpoint (it has no {} or {}){}", dir_.string(), kManifestFile,
                                  kCompleteFile,
                                  hugging_face ? "; it looks like a Hugging Face model: start a fresh run from its "
                                                 "weights with model.init_from: " + dir_.string()
                                               : ""));
  }
  if (!fs::exists(dir_ / kCompleteFile))
    throw UserError(fmt::format("checkpoint {} is incomplete: it has no {} marker (its write was interrupted)",
                                dir_.string(), kCompleteFile));
  const fs::path manifest_path = dir_ / kManifestFile;
  manifest_ = manifest_from_json(read_manifest_json(manifest_path), manifest_path);
  for (const ShardFileEntry& entry : manifest_.files) {
    // Only the names the writer produces: a manifest naming "../x" or "/etc/x" must not make a
    // resume or an export read (or report on) a file outside the checkpoint.
    const bool known_kind = std::find(std::begin(kKinds), std::end(kKinds), entry.kind) != std::end(kKinds);
    if (!known_kind || entry.rank >= manifest_.shard_ranks || entry.name != shard_file_name(entry.rank, entry.kind))
      throw UserError(fmt::format("{}: shard file entry '{}' (rank {}, kind '{}') is not a file this checkpoint format "
                                  "has; expected names like {} for shard ranks 0..{} and kinds master, exp_avg, "
                                  "exp_avg_sq",
                                  manifest_path.string(), entry.name, entry.rank, entry.kind,
                                  shard_file_name(0, "master"), manifest_.shard_ranks - 1));
    ShardFile f;
    f.entry = entry;
    f.path = dir_ / entry.name;
    if (!fs::exists(f.path))
      throw UserError(fmt::format("checkpoint {}: missing shard file {} (listed in {})", dir_.string(), f.path.string(),
                                  kManifestFile));
    const std::uint64_t found = fs::file_size(f.path);
    if (found != entry.bytes)
      throw UserError(fmt::format("checkpoint shard file {} is {}: expected {} bytes, found {}", f.path.string(),
                                  found < entry.bytes ? "truncated" : "too long", entry.bytes, found));
    if (entry.bytes != manifest_.shard_numel * sizeof(float))
      throw UserError(fmt::format("{}: shard file {} has {} bytes, but shards have {} fp32 elements", manifest_path.string(),
                                  entry.name, entry.bytes, manifest_.shard_numel));
    files_.emplace(std::pair(entry.rank, entry.kind), std::move(f));
  }
  for (int r = 0; r < manifest_.shard_ranks; ++r)
    for (const char* kind : kKinds)
      if (!files_.contains({r, kind}))
        throw UserError(fmt::format("{}: no {} file listed for shard rank {}", manifest_path.string(), kind, r));
}

Config CheckpointReader::config() const {
  return parse_config(manifest_.config_yaml, (dir_ / kManifestFile).string() + " (config_yaml)");
}

void CheckpointReader::check_model_matches(const ModelConfig& current) const {
  const ModelConfig saved = config().model;
  auto differs = [&](std::string_view key, auto in_checkpoint, auto in_config) {
    if (in_checkpoint != in_config)
      throw UserError(fmt::format("checkpoint {} holds another model: model.{} is {} in the checkpoint, {} in the config",
                                  dir_.string(), key, in_checkpoint, in_config));
  };
  differs("type", choice_name(saved.type), choice_name(current.type));
  differs("n_layer", saved.n_layer, current.n_layer);
  differs("n_head", saved.n_head, current.n_head);
  differs("n_embd", saved.n_embd, current.n_embd);
  differs("vocab_size", saved.vocab_size, current.vocab_size);
  differs("block_size", saved.block_size, current.block_size);
  differs("mlp_hidden", saved.mlp_hidden, current.mlp_hidden);
  differs("mlp_layers", saved.mlp_layers, current.mlp_layers);
}

void CheckpointReader::check_blocks_match(const models::Model& model) const {
  const auto& blocks = manifest_.blocks;
  if (blocks.size() != model.num_blocks())
    throw UserError(fmt::format("checkpoint {} has {} blocks, the model {}", dir_.string(), blocks.size(), model.num_blocks()));
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (blocks[b].name != model.block(b).name() || blocks[b].numel != model.block(b).param_count())
      throw UserError(fmt::format("checkpoint {}: block {} is {} with {} parameters, the model's is {} with {}",
                                  dir_.string(), b, blocks[b].name, blocks[b].numel, model.block(b).name(),
                                  model.block(b).param_count()));
}

CheckpointReader::ShardFile& CheckpointReader::file(int rank, const std::string& kind) {
  ShardFile& f = files_.at({rank, kind});
  if (!f.verified) verify(f);
  return f;
}

void CheckpointReader::verify(ShardFile& f) {
  f.fd = open_for_reading(f.path);
  const std::uint32_t found = crc32_of_file(f.fd, f.path, f.entry.bytes);
  if (found != f.entry.crc32)
    throw UserError(fmt::format("checkpoint shard file {} is corrupt: CRC32 expected {:08x} (from {}), found {:08x}",
                                f.path.string(), f.entry.crc32, kManifestFile, found));
  f.verified = true;
}

void CheckpointReader::verify_all_files() {
  for (auto& [key, f] : files_)
    if (!f.verified) verify(f);
}

void CheckpointReader::read_kind(const std::string& kind, std::size_t block, std::size_t begin, std::size_t count,
                                 float* out) {
  const BlockEntry& b = manifest_.blocks.at(block);
  if (begin + count > b.numel)
    throw std::out_of_range(fmt::format("elements [{}, {}) of block {} ({} elements)", begin, begin + count, b.name, b.numel));
  // Element i lives in shard rank i / chunk_numel, at shard_offset + i % chunk_numel there.
  for (std::size_t i = begin; i < begin + count;) {
    const int rank = static_cast<int>(i / b.chunk_numel);
    const std::size_t within = i % b.chunk_numel;
    const std::size_t n = std::min(begin + count - i, b.chunk_numel - within);
    ShardFile& f = file(rank, kind);
    read_exactly(f.fd, f.path, (b.shard_offset + within) * sizeof(float),
                 std::as_writable_bytes(std::span(out + (i - begin), n)));
    i += n;
  }
}

void CheckpointReader::read(std::size_t block, std::size_t begin, std::size_t count, float* master, float* exp_avg,
                            float* exp_avg_sq) {
  read_kind("master", block, begin, count, master);
  read_kind("exp_avg", block, begin, count, exp_avg);
  read_kind("exp_avg_sq", block, begin, count, exp_avg_sq);
}

}  // namespace zt::checkpoint
