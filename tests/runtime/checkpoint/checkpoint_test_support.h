// What the checkpoint tests share: a tiny GPT-2 (or Llama) trained on a fixed stream of random global
// batches (each rank loads its rows of every global batch, so a run's data does not depend on
// how the batch is split over ranks), and a checkpoint directory every rank agrees on.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "models/compute_context.h"
#include "models/gpt2.h"
#include "models/llama.h"
#include "runtime/checkpoint/checkpoint_writer.h"
#include "runtime/config/config.h"
#include "zero/engine.h"

namespace zt::testing_support {

inline constexpr int kSeqLen = 8;
inline constexpr int kGlobalRows = 6;  // splits evenly over 1, 2 and 3 ranks

enum class TinyModel { gpt2, llama };

// A small Llama with every optional part: grouped-query attention, QK-norm, an untied head.
inline models::LlamaConfig tiny_llama() {
  models::LlamaConfig c;
  c.n_layer = 2, c.n_head = 4, c.n_kv_head = 2, c.n_embd = 32, c.intermediate_size = 40, c.vocab_size = 64,
  c.block_size = 16, c.qk_norm = true, c.tie_embeddings = false;
  return c;
}

inline Config tiny_config(TinyModel kind = TinyModel::gpt2) {
  Config config = default_config();
  if (kind == TinyModel::llama) {
    const models::LlamaConfig c = tiny_llama();
    config.model.type = ModelType::llama;
    config.model.preset = ModelPreset::none;
    config.model.n_layer = c.n_layer, config.model.n_head = c.n_head, config.model.n_kv_head = c.n_kv_head;
    config.model.n_embd = c.n_embd, config.model.intermediate_size = c.intermediate_size;
    config.model.vocab_size = c.vocab_size, config.model.block_size = c.block_size;
    config.model.qk_norm = c.qk_norm, config.model.tie_embeddings = c.tie_embeddings;
    return config;
  }
  config.model.preset = ModelPreset::tiny;
  const models::GPT2Config tiny = models::GPT2Config::preset("tiny");
  config.model.n_layer = tiny.n_layer;
  config.model.n_head = tiny.n_head;
  config.model.n_embd = tiny.n_embd;
  config.model.vocab_size = tiny.vocab_size;
  config.model.block_size = tiny.block_size;
  return config;
}

inline ZeroOptions options_for_stage(int stage) {
  ZeroOptions o;
  o.stage = stage;
  o.reduce_bucket_size = 5000;  // several buckets
  o.stage3_prefetch_bucket_size = 7000;
  o.stage3_param_persistence_threshold = 300;
  o.adamw = AdamWOptions{.lr = 1e-2f, .betas = {0.9f, 0.95f}, .eps = 1e-8f, .weight_decay = 0.1f};
  o.gradient_clipping = 1.0;
  return o;
}

// The rows [first_row, first_row + rows) of global batch `step` (1-based steps).
inline void load_rows(models::Activations& acts, int vocab, std::int64_t step, int first_row, int rows) {
  std::mt19937 rng(static_cast<unsigned>(step % 3));  // three batches in turn: the loss falls
  std::uniform_int_distribution<int> token(0, vocab - 1);
  std::vector<std::int32_t> inputs, targets;
  for (int row = 0; row < kGlobalRows; ++row) {
    std::vector<std::int32_t> seq(kSeqLen + 1);
    for (auto& t : seq) t = token(rng);
    if (row < first_row || row >= first_row + rows) continue;
    inputs.insert(inputs.end(), seq.begin(), seq.end() - 1);
    targets.insert(targets.end(), seq.begin() + 1, seq.end());
  }
  acts.set_tokens(inputs, targets);
}

// One rank's training job on `comm` (its micro batch: kGlobalRows / world rows).
struct TinyJob {
  TinyJob(Communicator& comm, int stage, TinyModel kind = TinyModel::gpt2)
      : TinyJob(comm, options_for_stage(stage), kind) {}
  TinyJob(Communicator& comm, const ZeroOptions& options, TinyModel kind = TinyModel::gpt2)
      : comm(comm),
        kind(kind),
        model(kind == TinyModel::llama ? std::unique_ptr<models::Model>(std::make_unique<models::Llama>(tiny_llama()))
                                       : std::make_unique<models::GPT2>(models::GPT2Config::preset("tiny"))),
        vocab(kind == TinyModel::llama ? tiny_llama().vocab_size : models::GPT2Config::preset("tiny").vocab_size),
        ctx(models::ComputeContext::cpu(1)),
        rows(kGlobalRows / comm.world_size()),
        engine(std::make_unique<ZeroEngine>(*model, *ctx, comm, options, rows, kSeqLen, tracker)) {}

  double step(std::int64_t s) { return step_stats(s).loss; }
  StepStats step_stats(std::int64_t s) {
    return engine->train_step(
        [&](models::Activations& acts, int) { load_rows(acts, vocab, s, comm.rank() * rows, rows); }, 1e-2);
  }

  checkpoint::SaveResult save(const std::filesystem::path& root, std::int64_t s, std::int64_t keep_last = 0,
                              std::function<void()> after_shard_files = {}, const std::string& run_id = "",
                              std::int64_t save_index = 0) {
    checkpoint::SaveRequest request;
    request.root = root;
    request.step = s;
    request.config_yaml = config_to_yaml(tiny_config(kind));
    request.loader = {0, static_cast<std::uint64_t>(s)};
    request.rank = comm.rank();
    request.world_size = comm.world_size();
    request.barrier = [this] { comm.barrier(ctx->stream()).wait(); };
    request.keep_last = keep_last;
    request.after_shard_files = std::move(after_shard_files);
    request.run_id = run_id;
    request.save_index = save_index;
    return checkpoint::save_checkpoint(*engine, *model, request);
  }

  Communicator& comm;
  TinyModel kind;
  MemoryTracker tracker;
  std::unique_ptr<models::Model> model;
  int vocab;
  std::unique_ptr<models::ComputeContext> ctx;
  int rows;
  std::unique_ptr<ZeroEngine> engine;
};

// A fresh directory under the temp dir, the same path on every rank of MPI_COMM_WORLD.
inline std::filesystem::path shared_temp_dir(const std::string& name) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[512] = {};
  if (rank == 0) {
    std::string made = (std::filesystem::temp_directory_path() / (name + "-XXXXXX")).string();
    if (!mkdtemp(made.data())) throw std::runtime_error("mkdtemp failed");
    made.copy(path, sizeof path - 1);
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

}  // namespace zt::testing_support
