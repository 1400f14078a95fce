// Where a rank's micro-batches come from: token shards through the TokenLoader (token models), or a
// feature model's synthetic task (the MLP). Either way each rank gets its own rows of every global batch, and the
// position can be saved and restored with a checkpoint.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <vector>

#include "models/activations.h"
#include "models/model.h"
#include "runtime/data/token_loader.h"

namespace zt {

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // Loads this rank's next micro-batch into acts and advances by one global batch.
  virtual void next(models::Activations& acts) = 0;
  // The batch the next next() hands out, read now where it is not read yet, without moving
  // position(); nullptr for a source without tokens, or where reading it failed (that next()
  // raises the error).
  virtual const models::TokenBatch* peek() { return nullptr; }
  virtual data::LoaderPosition position() const = 0;
  virtual void restore(data::LoaderPosition position) = 0;
};

// prefetch: each next() hands out a micro batch read and indexed on a thread of its own while the
// device ran the previous one, and starts on the one after. For GPUs, whose host would otherwise
// read and sort between the step's end and the next forward while the device has only the
// optimizer queued; on the CPU the host is the device, and a thread of its own would take a core
// from compute. The batches, their order and position() are the same either way: position() is
// that of the batch next() hands out next, never the prefetched one, and restore() drops it. A
// data error of a prefetched batch is raised by the next() that hands it out.
class TokenBatches final : public BatchSource {
 public:
  explicit TokenBatches(data::TokenLoaderOptions options, bool prefetch = false);
  ~TokenBatches() override;  // waits for a prefetch under way
  TokenBatches(const TokenBatches&) = delete;  // the prefetch thread holds `this`
  TokenBatches& operator=(const TokenBatches&) = delete;
  void next(models::Activations& acts) override;
  const models::TokenBatch* peek() override;
  data::LoaderPosition position() const override { return position_; }
  void restore(data::LoaderPosition position) override;
  // The loader itself: only for a source that does not prefetch (its thread moves the loader on).
  const data::TokenLoader& loader() const { return loader_; }

 private:
  void read(models::TokenBatch& batch);  // the loader's next batch, indexed
  void drop_prefetch() noexcept;

  data::TokenLoader loader_;
  const bool prefetch_;
  models::TokenBatch batches_[2];  // the one handed out last and the one being prepared
  int current_ = 0;
  std::shared_future<void> prefetched_;  // preparing batches_[1 - current_] (a prefetch or a peek)
  data::LoaderPosition position_;
};

// Global batch g of a feature model's task is model.synthetic_batch(seed + g) of world_size * B
// rows; rank r takes rows [r*B, (r+1)*B).
class SyntheticBatches final : public BatchSource {
 public:
  // model outlives the source.
  SyntheticBatches(const models::Model& model, int batch_size, int rank, int world_size, std::uint64_t seed);
  void next(models::Activations& acts) override;
  data::LoaderPosition position() const override { return {0, next_batch_}; }
  void restore(data::LoaderPosition position) override { next_batch_ = position.window; }

 private:
  const models::Model& model_;
  int batch_size_, rank_, world_size_;
  std::uint64_t seed_;
  std::uint64_t next_batch_ = 0;
  std::vector<float> features_;
  std::vector<std::int32_t> labels_;
};

}  // namespace zt
