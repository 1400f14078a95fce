// Where a rank's micro-batches come from: token shards through the TokenLoader (token models), or a
// feature model's synthetic task (the MLP). Either way each rank gets its own rows of every global batch, and the
// position can be saved and restored with a checkpoint.
#pragma once

#include <cstdint>
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
  virtual data::LoaderPosition position() const = 0;
  virtual void restore(data::LoaderPosition position) = 0;
};

class TokenBatches final : public BatchSource {
 public:
  explicit TokenBatches(data::TokenLoaderOptions options);
  void next(models::Activations& acts) override;
  data::LoaderPosition position() const override { return loader_.position(); }
  void restore(data::LoaderPosition position) override { loader_.restore(position); }
  const data::TokenLoader& loader() const { return loader_; }

 private:
  data::TokenLoader loader_;
  std::vector<std::int32_t> inputs_, targets_;  // (B, T), reused every micro-batch
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
