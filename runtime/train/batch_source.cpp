#include "runtime/train/batch_source.h"

namespace zt {

TokenBatches::TokenBatches(data::TokenLoaderOptions options)
    : loader_(std::move(options)),
      inputs_(static_cast<std::size_t>(loader_.options().batch_size) * loader_.options().seq_len),
      targets_(inputs_.size()) {}

void TokenBatches::next(models::Activations& acts) {
  loader_.next(inputs_, targets_);
  acts.set_tokens(inputs_, targets_);
}

SyntheticBatches::SyntheticBatches(const models::Model& model, int batch_size, int rank, int world_size,
                                   std::uint64_t seed)
    : model_(model), batch_size_(batch_size), rank_(rank), world_size_(world_size), seed_(seed) {}

void SyntheticBatches::next(models::Activations& acts) {
  const int rows = acts.B() * acts.T();  // every (b, t) position is one sample of the task
  model_.synthetic_batch(seed_ + next_batch_, rows * world_size_, features_, labels_);
  ++next_batch_;
  const std::size_t first = static_cast<std::size_t>(rank_) * rows;
  const std::size_t width = static_cast<std::size_t>(model_.input_width());
  acts.set_features(std::span(features_).subspan(first * width, rows * width),
                    std::span(labels_).subspan(first, rows));
}

}  // namespace zt
