#include "runtime/train/batch_source.h"

#include <exception>
#include <utility>

namespace zt {

TokenBatches::TokenBatches(data::TokenLoaderOptions options, bool prefetch)
    : loader_(std::move(options)), prefetch_(prefetch), position_(loader_.position()) {}

TokenBatches::~TokenBatches() { drop_prefetch(); }

void TokenBatches::read(models::TokenBatch& batch) {
  const auto n = static_cast<std::size_t>(loader_.options().batch_size) * loader_.options().seq_len;
  batch.tokens.resize(n);
  batch.targets.resize(n);
  loader_.next(batch.tokens, batch.targets);
  batch.build_index();
}

void TokenBatches::next(models::Activations& acts) {
  if (prefetched_.valid()) {
    current_ = 1 - current_;
    std::exchange(prefetched_, {}).get();  // rethrows the prefetch's error, as a read here would have
  } else {
    read(batches_[current_]);
  }
  position_ = loader_.position();  // before the prefetch moves the loader on
  if (prefetch_)
    prefetched_ = std::async(std::launch::async, [this, next = 1 - current_] { read(batches_[next]); }).share();
  acts.set_tokens(batches_[current_]);
}

const models::TokenBatch* TokenBatches::peek() {
  if (!prefetched_.valid()) {
    // Read now, as a prefetch would have: the next next() takes it from there.
    std::promise<void> read_done;
    try {
      read(batches_[1 - current_]);
      read_done.set_value();
    } catch (...) {
      read_done.set_exception(std::current_exception());
    }
    prefetched_ = read_done.get_future().share();
  }
  try {
    prefetched_.get();
  } catch (...) {
    return nullptr;  // next() raises it
  }
  return &batches_[1 - current_];
}

void TokenBatches::restore(data::LoaderPosition position) {
  drop_prefetch();
  loader_.restore(position);
  position_ = loader_.position();
}

void TokenBatches::drop_prefetch() noexcept {
  if (!prefetched_.valid()) return;
  try {
    std::exchange(prefetched_, {}).get();
  } catch (...) {
    // A batch nobody will hand out: its error is not the job's.
  }
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
