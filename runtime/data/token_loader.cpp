#include "runtime/data/token_loader.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"
#include "runtime/data/shard_files.h"
#include "runtime/data/shuffle.h"

namespace zt::data {
namespace {

void check_options(const TokenLoaderOptions& options) {
  if (options.batch_size <= 0) throw UserError(fmt::format("data loader: batch size must be positive, got {}", options.batch_size));
  if (options.seq_len <= 0) throw UserError(fmt::format("data loader: sequence length must be positive, got {}", options.seq_len));
  if (options.world_size <= 0 || options.rank < 0 || options.rank >= options.world_size) {
    throw UserError(fmt::format("data loader: rank {} is not in a world of {} ranks", options.rank, options.world_size));
  }
  if (options.vocab_size <= 0)
    throw UserError(fmt::format("data loader: vocabulary size must be positive, got {}", options.vocab_size));
}

// Seed streams: the shard order of an epoch, and the window order of each shard in it.
constexpr std::uint64_t kShardOrderStream = 0;

}  // namespace

TokenLoader::TokenLoader(TokenLoaderOptions options) : options_(std::move(options)) {
  check_options(options_);
  for (auto& path : expand_shard_pattern(options_.shard_pattern)) {
    shards_.emplace_back(std::move(path));
    shards_.back().check_tokens_below(options_.vocab_size);
  }
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    total_windows_ += windows_in_shard(s);
    total_tokens_ += shards_[s].size();
    if (windows_in_shard(s) > UINT32_MAX) {
      throw UserError(fmt::format("{}: more than 2^32 windows in one shard; split it", shards_[s].path().string()));
    }
  }
  if (total_windows_ < global_batch_rows()) {
    throw UserError(fmt::format(
        "{}: too little data for one global batch: {} tokens in {} shard file(s) make {} windows of T+1 = {} "
        "tokens, but a global batch needs {} windows ({} ranks x batch size {}), at least {} tokens",
        options_.shard_pattern, total_tokens_, shards_.size(), total_windows_, options_.seq_len + 1,
        global_batch_rows(), options_.world_size, options_.batch_size,
        global_batch_rows() * static_cast<std::uint64_t>(options_.seq_len) + 1));
  }
  prepare_epoch(0);
}

std::uint64_t TokenLoader::global_batch_rows() const {
  return static_cast<std::uint64_t>(options_.world_size) * static_cast<std::uint64_t>(options_.batch_size);
}

std::uint64_t TokenLoader::windows_in_shard(std::size_t shard) const {
  const std::uint64_t n = shards_[shard].size();
  return n == 0 ? 0 : (n - 1) / static_cast<std::uint64_t>(options_.seq_len);
}

void TokenLoader::restore(LoaderPosition position) {
  if (position.window > total_windows_) {
    throw UserError(fmt::format("data loader position {} (epoch {}) lies beyond the {} windows of an epoch of {}; "
                                "was it saved with other data or another sequence length?",
                                position.window, position.epoch, total_windows_, options_.shard_pattern));
  }
  position_ = position;
}

void TokenLoader::prepare_epoch(std::uint64_t epoch) {
  if (epoch == prepared_epoch_) return;
  shard_order_.resize(shards_.size());
  std::iota(shard_order_.begin(), shard_order_.end(), 0u);
  if (options_.order == WindowOrder::shuffled) {
    shuffle(shard_order_, derive_seed(derive_seed(options_.seed, epoch), kShardOrderStream));
  }
  order_starts_.resize(shards_.size());
  std::uint64_t start = 0;
  for (std::size_t i = 0; i < shard_order_.size(); ++i) {
    order_starts_[i] = start;
    start += windows_in_shard(shard_order_[i]);
  }
  prepared_epoch_ = epoch;
  permuted_shard_ = SIZE_MAX;
}

std::pair<std::size_t, std::uint64_t> TokenLoader::locate(std::uint64_t stream_index) {
  // The last shard in order whose first window is at or before stream_index; empty shards share
  // their start with the next one, and upper_bound skips past them.
  const auto after = std::upper_bound(order_starts_.begin(), order_starts_.end(), stream_index);
  const auto i = static_cast<std::size_t>(after - order_starts_.begin()) - 1;
  const std::size_t shard = shard_order_[i];
  const std::uint64_t offset = stream_index - order_starts_[i];
  if (options_.order == WindowOrder::sequential) return {shard, offset};
  if (permuted_shard_ != shard) {
    window_order_.resize(windows_in_shard(shard));
    std::iota(window_order_.begin(), window_order_.end(), 0u);
    shuffle(window_order_, derive_seed(derive_seed(options_.seed, prepared_epoch_), kShardOrderStream + 1 + shard));
    permuted_shard_ = shard;
  }
  return {shard, window_order_[offset]};
}

void TokenLoader::next(std::span<std::int32_t> inputs, std::span<std::int32_t> targets) {
  const auto B = static_cast<std::size_t>(options_.batch_size);
  const auto T = static_cast<std::size_t>(options_.seq_len);
  if (inputs.size() != B * T || targets.size() != B * T) {
    throw std::invalid_argument(fmt::format("TokenLoader::next: inputs and targets must hold B*T = {} tokens, got {} and {}",
                                            B * T, inputs.size(), targets.size()));
  }
  if (position_.window + global_batch_rows() > total_windows_) position_ = {.epoch = position_.epoch + 1, .window = 0};
  prepare_epoch(position_.epoch);

  const std::uint64_t first_row = position_.window + static_cast<std::uint64_t>(options_.rank) * B;
  window_tokens_.resize(T + 1);
  const std::span<const std::uint32_t> tokens = window_tokens_;  // (T+1)
  for (std::size_t b = 0; b < B; ++b) {
    const auto [shard, window] = locate(first_row + b);
    // At most one shard file open at a time: consecutive windows mostly share a shard.
    if (shard != open_shard_ && open_shard_ < shards_.size()) shards_[open_shard_].close();
    open_shard_ = shard;
    // Read into our own buffer and checked there: what the model sees is what was validated.
    shards_[shard].read(window * T, window_tokens_, options_.vocab_size);
    for (std::size_t t = 0; t < T; ++t) {
      inputs[b * T + t] = static_cast<std::int32_t>(tokens[t]);
      targets[b * T + t] = static_cast<std::int32_t>(tokens[t + 1]);
    }
  }
  position_.window += global_batch_rows();
}

}  // namespace zt::data
