// `zerotrain eval`: the loss and perplexity of a checkpoint's weights over a token dataset, on
// any number of ranks (each takes its rows of every global batch, as in training).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace zt {

struct EvalOptions {
  std::filesystem::path checkpoint;
  std::string data;           // glob; empty = the run's data.val_files (or train_files when it has none)
  std::int64_t batches = 0;   // 0 = every full global batch of the dataset
  std::int64_t batch_size = 0;  // rows per rank; 0 = the run's micro batch size
};

struct EvalResult {
  double loss = 0.0;  // mean cross-entropy per token (nats)
  double perplexity = 0.0;
  std::int64_t batches = 0;
  std::uint64_t tokens = 0;            // scored: batches x ranks x B x T
  std::uint64_t dataset_windows = 0;   // windows of T + 1 tokens in the data
  std::string data;                    // the glob evaluated
};

// Collective over MPI_COMM_WORLD (an MpiSession must exist). Throws zt::UserError for a bad
// checkpoint, data that does not fit the model, or too few windows for one global batch.
EvalResult evaluate_checkpoint(const EvalOptions& options);

}  // namespace zt
