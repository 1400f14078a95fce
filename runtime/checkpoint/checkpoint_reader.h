// Reading a complete checkpoint: the manifest is checked when it is opened (COMPLETE marker,
// format version, every shard file present with its recorded size), each shard file's CRC32 the
// first time anything is read from it. Any problem is a zt::UserError naming the file and what
// was expected and found.
//
// As a ShardSource it serves any block range from the saving run's partition, so an engine of
// another world size or ZeRO stage loads it directly.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "models/model.h"
#include "runtime/checkpoint/checkpoint_file_io.h"
#include "runtime/checkpoint/checkpoint_manifest.h"
#include "runtime/config/config.h"
#include "zero/engine.h"

namespace zt::checkpoint {

class CheckpointReader final : public ShardSource {
 public:
  explicit CheckpointReader(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }
  const Manifest& manifest() const { return manifest_; }
  // The saving run's config.
  Config config() const;
  // Throws naming the first model key that differs, e.g. "model.n_layer is 2 in the checkpoint,
  // 4 in the config".
  void check_model_matches(const ModelConfig& model) const;
  // Throws when the model's blocks (count, names, sizes) differ from the checkpoint's.
  void check_blocks_match(const models::Model& model) const;

  void read(std::size_t block, std::size_t begin, std::size_t count, float* master, float* exp_avg,
            float* exp_avg_sq) override;
  // Elements [begin, begin + count) of one kind ("master", "exp_avg", "exp_avg_sq") of a block.
  void read_kind(const std::string& kind, std::size_t block, std::size_t begin, std::size_t count, float* out);
  // Checks the CRC32 of every shard file now rather than on first use.
  void verify_all_files();

 private:
  struct ShardFile {
    ShardFileEntry entry;
    std::filesystem::path path;
    FileDescriptor fd;
    bool verified = false;
  };
  ShardFile& file(int rank, const std::string& kind);
  void verify(ShardFile& file);

  std::filesystem::path dir_;
  Manifest manifest_;
  std::map<std::pair<int, std::string>, ShardFile> files_;
};

}  // namespace zt::checkpoint
