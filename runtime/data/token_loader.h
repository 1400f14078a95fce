// Feeds each rank its slice of every global batch from token shards (see shard_format.h).
//
// The stream. A shard of n tokens holds floor((n - 1) / T) windows of T + 1 tokens; window k starts
// at token k·T (consecutive windows share one token, the last target of one being the first input
// of the next), and windows never cross shards. An epoch is an order of all W windows:
//   shuffled   (training): the shard order is shuffled, then the windows within each shard, with
//              seeds derived from (seed, epoch), so every epoch is reshuffled;
//   sequential (validation): shards by file name, windows in file order, the same every epoch.
// With global batch size G = world_size · B, global batch g of an epoch is windows [g·G, (g+1)·G)
// of its order, and rank r takes rows [r·B, (r+1)·B) of it. An epoch has floor(W / G) batches;
// the windows left over are skipped (a reshuffled epoch puts them elsewhere). The stream depends
// on the seed and G only, never on how G is split over ranks, and the position counts windows, so
// a run can resume with another world size (or even batch size) and continue the same stream.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "runtime/data/loader_position.h"
#include "runtime/data/shard_reader.h"

namespace zt::data {

enum class WindowOrder { shuffled, sequential };

struct TokenLoaderOptions {
  std::string shard_pattern;  // glob, e.g. "data/fortunes/train_*.bin"
  int batch_size = 0;         // B: rows per rank per micro-step
  int seq_len = 0;            // T
  int rank = 0;
  int world_size = 1;
  std::uint64_t seed = 0;
  int vocab_size = 0;         // every token must be below it (checked when the shards open and on every read)
  WindowOrder order = WindowOrder::shuffled;
};

class TokenLoader {
 public:
  // Opens and checks every shard. Throws zt::UserError when no file matches, a shard is invalid
  // or holds a token >= vocab_size, or the windows do not fill one global batch.
  explicit TokenLoader(TokenLoaderOptions options);

  // Fills this rank's next micro-batch and advances the position by one global batch. Throws
  // zt::UserError naming the file and byte offset when a shard changed during the run.
  // inputs (B, T) row-major, targets (B, T) with targets[b][t] the token after inputs[b][t].
  void next(std::span<std::int32_t> inputs, std::span<std::int32_t> targets);

  LoaderPosition position() const { return position_; }
  // Continues from a saved position. Throws zt::UserError if it lies beyond this data's epoch.
  void restore(LoaderPosition position);
  void rewind() { restore({}); }  // back to the start of epoch 0 (e.g. before each validation pass)

  std::uint64_t windows_per_epoch() const { return total_windows_; }
  std::uint64_t batches_per_epoch() const { return total_windows_ / global_batch_rows(); }
  std::uint64_t total_tokens() const { return total_tokens_; }
  std::size_t shard_count() const { return shards_.size(); }
  const TokenLoaderOptions& options() const { return options_; }

 private:
  std::uint64_t global_batch_rows() const;
  std::uint64_t windows_in_shard(std::size_t shard) const;
  void prepare_epoch(std::uint64_t epoch);
  // The window at `stream_index` of the current epoch's order, as (shard, window within it).
  std::pair<std::size_t, std::uint64_t> locate(std::uint64_t stream_index);

  TokenLoaderOptions options_;
  std::vector<TokenShard> shards_;
  std::uint64_t total_windows_ = 0;
  std::uint64_t total_tokens_ = 0;
  LoaderPosition position_;

  // The current epoch's order; reused between epochs so that steady state allocates nothing.
  std::uint64_t prepared_epoch_ = UINT64_MAX;
  std::vector<std::uint32_t> shard_order_;
  std::vector<std::uint64_t> order_starts_;  // stream index of each shard_order_ entry's first window
  std::size_t permuted_shard_ = SIZE_MAX;    // whose window order window_order_ holds
  std::vector<std::uint32_t> window_order_;
  std::size_t open_shard_ = SIZE_MAX;          // the one shard whose file is open
  std::vector<std::uint32_t> window_tokens_;   // (T+1): the window being copied out, as read and checked
};

}  // namespace zt::data
