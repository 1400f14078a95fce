// The ZeRO engine on real ranks (run by CTest under mpirun with 1, 2, 3 and 4 ranks): every
// stage, with overlap on and off, against a single-process run of the same global batch, for the
// MLP, GPT-2 and a Llama (grouped-query attention, QK-norm, tied head): the engine does not know
// which model it trains.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "comm/make_communicator.h"
#include "models/compute_context.h"
#include "models/gpt2.h"
#include "models/llama.h"
#include "models/mlp.h"
#include "zero/engine.h"
#include "zero/first_rows.h"
#include "zero/memory_plan.h"
#include "zero/shard_optimizer.h"
#include "zero/timeline.h"

namespace zt {
namespace {

using Space = MemoryTracker::Space;

// gpt2_wide_vocab: layers smaller than a bucket (a bucket spans several) and an embedding of
// several buckets, for the rows exchange's deferred buckets (zero/lookup_rows.h).
enum class ModelKind { mlp, gpt2, llama, gpt2_wide_vocab };

std::string kind_name(ModelKind kind) {
  return kind == ModelKind::mlp ? "mlp" : kind == ModelKind::gpt2 ? "gpt2" : kind == ModelKind::llama ? "llama"
                                                                                                      : "gpt2_wide_vocab";
}

models::LlamaConfig small_llama() {
  models::LlamaConfig c;
  c.n_layer = 2, c.n_head = 4, c.n_kv_head = 2, c.n_embd = 32, c.intermediate_size = 40, c.vocab_size = 64,
  c.block_size = 16, c.qk_norm = true;
  return c;
}

struct Job {
  ModelKind kind = ModelKind::mlp;
  int B = 2;  // micro batch per rank
  int T = 1;
  int steps = 10;
  ZeroOptions options;
  // Tell train_step the next step's first tokens (ZeroEngine::PeekNextTokens), and evaluate after
  // every eval_every-th step (0: never).
  bool peek_next_tokens = false;
  int eval_every = 0;
  int rank_without_next_tokens = -1;  // this rank's peek knows nothing
  int peek_offset = 1;                // the peek shows step + this (1: the truth)
  std::optional<models::DeviceRates> emulated;  // this rank's emulated accelerator, instead of the CPU
};

std::unique_ptr<models::Model> make_model(ModelKind kind) {
  if (kind == ModelKind::mlp) return std::make_unique<models::MLP>(models::MLPConfig{16, 24, 3, 8});
  if (kind == ModelKind::llama) return std::make_unique<models::Llama>(small_llama());
  if (kind == ModelKind::gpt2_wide_vocab) {
    models::GPT2Config c = models::GPT2Config::preset("tiny");
    c.n_layer = 6, c.n_head = 2, c.n_embd = 8, c.vocab_size = c.padded_vocab_size = 1000;
    return std::make_unique<models::GPT2>(c);
  }
  return std::make_unique<models::GPT2>(models::GPT2Config::preset("tiny"));
}

ZeroOptions base_options(int stage, bool overlap) {
  ZeroOptions o;
  o.stage = stage;
  o.overlap_comm = overlap;
  // Buckets smaller than most layers, so that layers are cut into pieces, a smaller first bucket,
  // and buffers for three buckets in flight.
  o.reduce_bucket_size = 500;
  o.first_reduce_bucket_size = 120;
  o.reduce_buffer_size = 1500;
  o.stage3_prefetch_bucket_size = 700;
  o.stage3_param_persistence_threshold = 300;  // some MLP/GPT-2 blocks stay gathered
  o.gradient_accumulation_steps = 2;
  // eps 1e-6 rather than 1e-8: AdamW turns a gradient of rounding-noise size into an update of
  // up to lr, so with a tiny eps the comparison would measure Adam's sensitivity to summation
  // order (ranks vs rows), not the engine.
  o.adamw = AdamWOptions{.lr = 1e-2f, .betas = {0.9f, 0.95f}, .eps = 1e-6f, .weight_decay = 0.1f};
  o.gradient_clipping = 1.0;
  // The rows first at every update, where the tests expect them; auto's choice is tested by itself.
  o.lookup_rows_first = LookupRowsFirst::always;
  return o;
}

// GPT-2 (make_model's) on 8 tokens per sequence, `steps` steps under `options`.
Job gpt2_job(int steps, const ZeroOptions& options) {
  Job job;
  job.kind = ModelKind::gpt2;
  job.T = 8;
  job.steps = steps;
  job.options = options;
  return job;
}

// Loads rows [first_row, first_row + rows) of the global micro-batch `micro` of step `step`.
// The global batch is the same whoever loads it, so a rank's slice and a single process's whole
// batch see the same samples.
class GlobalBatches {
 public:
  GlobalBatches(ModelKind kind, const models::Model& model, int global_rows, int T)
      : kind_(kind), model_(model), global_rows_(global_rows), T_(T) {}

  void load(models::Activations& acts, int step, int micro, int first_row, int rows) const {
    // Two global batches, alternating, so that ten steps visibly fit them.
    const std::uint64_t seed = 1000u * static_cast<std::uint64_t>(step % 2) + static_cast<std::uint64_t>(micro);
    if (kind_ == ModelKind::mlp) {
      const auto& mlp = static_cast<const models::MLP&>(model_);
      std::vector<float> features;
      std::vector<std::int32_t> labels;
      models::mlp_synthetic_batch(mlp.config(), seed, global_rows_ * T_, features, labels);
      const int width = mlp.config().input_width;
      std::vector<float> f(features.begin() + first_row * T_ * width, features.begin() + (first_row + rows) * T_ * width);
      std::vector<std::int32_t> l(labels.begin() + first_row * T_, labels.begin() + (first_row + rows) * T_);
      if (poison_ && step == poison_step_ && poison_rank_first_row_ == first_row) f.assign(f.size(), INFINITY);
      acts.set_features(f, l);
      return;
    }
    std::vector<std::int32_t> inputs, targets;
    token_rows(seed, first_row, rows, inputs, targets);
    acts.set_tokens(inputs, targets);
  }
  // The input tokens that load(…, step, micro, first_row, rows) loads (token models).
  std::vector<std::int32_t> tokens(int step, int micro, int first_row, int rows) const {
    std::vector<std::int32_t> inputs, targets;
    token_rows(1000u * static_cast<std::uint64_t>(step % 2) + static_cast<std::uint64_t>(micro), first_row, rows,
               inputs, targets);
    return inputs;
  }
  // Makes the micro-batches of `step` loaded with first row `first_row` all inf (one rank's data).
  void poison(int step, int first_row) {
    poison_ = true;
    poison_step_ = step;
    poison_rank_first_row_ = first_row;
  }

 private:
  void token_rows(std::uint64_t seed, int first_row, int rows, std::vector<std::int32_t>& inputs,
                  std::vector<std::int32_t>& targets) const {
    const int vocab = kind_ != ModelKind::llama ? static_cast<const models::GPT2&>(model_).config().vocab_size
                                               : static_cast<const models::Llama&>(model_).config().vocab_size;
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::uniform_int_distribution<int> token(0, vocab - 1);
    for (int row = 0; row < global_rows_; ++row) {
      std::vector<std::int32_t> seq(T_ + 1);
      for (auto& t : seq) t = token(rng);
      if (row < first_row || row >= first_row + rows) continue;
      inputs.insert(inputs.end(), seq.begin(), seq.end() - 1);
      targets.insert(targets.end(), seq.begin() + 1, seq.end());
    }
  }

  ModelKind kind_;
  const models::Model& model_;
  int global_rows_, T_;
  bool poison_ = false;
  int poison_step_ = -1, poison_rank_first_row_ = -1;
};

struct RunResult {
  std::vector<double> losses, eval_losses;
  int rows_gathers = 0;  // updates that gathered the next lookup's rows (traced where the job peeks)
  std::vector<StepStats> stats;
  std::vector<float> params;
};

// Trains job on comm (each rank its slice of every global batch).
RunResult run(const Job& job, Communicator& comm, int global_rows, MemoryTracker& tracker,
              GlobalBatches* batches_override = nullptr) {
  auto model = make_model(job.kind);
  auto ctx = job.emulated ? models::ComputeContext::emulated(*job.emulated, job.options.compute_dtype)
                          : models::ComputeContext::cpu(1, job.options.compute_dtype);
  ZeroEngine engine(*model, *ctx, comm, job.options, job.B, job.T, tracker);
  engine.init_parameters(7);
  GlobalBatches own(job.kind, *model, global_rows, job.T);
  const GlobalBatches& batches = batches_override ? *batches_override : own;
  RunResult result;
  for (int step = 0; step < job.steps; ++step) {
    std::vector<std::int32_t> next;
    ZeroEngine::PeekNextTokens peek;
    if (job.peek_next_tokens)
      peek = [&] {
        if (comm.rank() == job.rank_without_next_tokens) return std::span<const std::int32_t>();
        next = batches.tokens(step + job.peek_offset, 0, comm.rank() * job.B, job.B);
        return std::span<const std::int32_t>(next);
      };
    std::optional<trace::Timeline> timeline;
    if (job.peek_next_tokens) {
      timeline.emplace(comm.rank());
      timeline->begin_step(step, ctx->stream());
      engine.set_timeline(&*timeline);
    }
    StepStats stats = engine.train_step(
        [&](models::Activations& acts, int micro) { batches.load(acts, step, micro, comm.rank() * job.B, job.B); },
        job.options.adamw.lr, 0, peek);
    if (timeline) {
      engine.set_timeline(nullptr);
      timeline->end_step();
      for (const trace::Span& span : timeline->resolve())
        result.rows_gathers += (span.name.starts_with("all_gather block ") ||
                                span.name.starts_with("all_gather params ")) &&
                               span.name.ends_with(" rows");
    }
    result.losses.push_back(stats.loss);
    result.stats.push_back(stats);
    if (job.eval_every > 0 && (step + 1) % job.eval_every == 0)
      result.eval_losses.push_back(engine.eval_loss(
          [&](models::Activations& acts, int) { batches.load(acts, step + 7, 1, comm.rank() * job.B, job.B); }));
  }
  result.params = engine.gather_full_params_f32();
  return result;
}

class EngineTest : public testing::Test {
 protected:
  void SetUp() override {
    world_ = make_communicator(CommOptions{}, Device::cpu());
    int rank = world_->rank();
    solo_ = world_->split(rank, 0, "solo");  // a one-rank communicator: the single-process reference
  }
  // The single-process run of the same global batch: stage 0 on one rank with N times the micro batch.
  RunResult reference(Job job) {
    int N = world_->world_size();
    int global_rows = job.B * N;
    job.B = global_rows;
    job.options.stage = 0;
    MemoryTracker tracker;
    return run(job, *solo_, global_rows, tracker);
  }
  std::unique_ptr<Communicator> world_, solo_;
};

void expect_close(const RunResult& got, const RunResult& want, const std::string& what) {
  ASSERT_EQ(got.losses.size(), want.losses.size());
  for (std::size_t s = 0; s < got.losses.size(); ++s)
    EXPECT_NEAR(got.losses[s], want.losses[s], 2e-6 * std::abs(want.losses[s]) + 1e-7) << what << " step " << s;
  ASSERT_EQ(got.params.size(), want.params.size()) << what;
  double worst = 0.0;
  std::size_t worst_at = 0, above = 0;
  for (std::size_t i = 0; i < got.params.size(); ++i) {
    double d = std::abs(got.params[i] - want.params[i]);
    if (d > worst) worst = d, worst_at = i;
    if (d > 2e-5) ++above;
  }
  if (std::getenv("ZT_TEST_VERBOSE")) std::fprintf(stderr, "%s: largest difference %.3g at %zu of %zu, %zu above 2e-5\n", what.c_str(), worst, worst_at, got.params.size(), above);
  // fp32 with fp32 communication: only the summation order differs (ranks vs rows).
  EXPECT_LT(worst, 2e-5) << what << ": largest parameter difference " << worst;
}

TEST_F(EngineTest, EveryStageMatchesTheSingleProcessRun) {
  for (ModelKind kind : {ModelKind::mlp, ModelKind::gpt2, ModelKind::llama}) {
    Job job;
    job.kind = kind;
    job.T = kind == ModelKind::mlp ? 1 : 8;
    job.options = base_options(0, true);
    RunResult want = reference(job);
    EXPECT_LT(want.losses.back(), want.losses.front()) << "the reference run does not learn";
    for (int stage = 0; stage <= 3; ++stage) {
      for (bool overlap : {true, false}) {
        job.options = base_options(stage, overlap);
        MemoryTracker tracker;
        RunResult got = run(job, *world_, job.B * world_->world_size(), tracker);
        expect_close(got, want,
                     kind_name(kind) + " stage " + std::to_string(stage) + (overlap ? " overlap" : " no overlap"));
      }
    }
  }
}

// With gradient accumulation, on any number of ranks (the test runs on 1-4), with layers cut into
// many buckets (base_options) and with one bucket for the whole model.
TEST_F(EngineTest, OverlapOnAndOffAreBitwiseIdentical) {
  for (ModelKind kind : {ModelKind::gpt2, ModelKind::llama})
    for (int stage = 0; stage <= 3; ++stage)
      for (std::size_t bucket : {std::size_t{0}, std::size_t{10'000'000}}) {
        Job job;
        job.kind = kind;
        job.T = 8;
        job.steps = 4;
        job.options = base_options(stage, true);
        if (bucket != 0) job.options.reduce_bucket_size = job.options.first_reduce_bucket_size = bucket;
        MemoryTracker t1, t2;
        RunResult on = run(job, *world_, job.B * world_->world_size(), t1);
        job.options.overlap_comm = false;
        RunResult off = run(job, *world_, job.B * world_->world_size(), t2);
        ASSERT_EQ(on.params.size(), off.params.size());
        EXPECT_EQ(std::memcmp(on.params.data(), off.params.data(), on.params.size() * sizeof(float)), 0)
            << kind_name(kind) << " stage " << stage << " bucket " << bucket;
        EXPECT_EQ(on.losses, off.losses) << kind_name(kind) << " stage " << stage << " bucket " << bucket;
      }
}

// zero_optimization.embedding_gradient rows (zero/lookup_rows.h): the tied embedding's gradient
// reduced as the LM head's part during backward and the lookup's rows after it. GPT-2 (wte and wpe
// rows) and Llama (tied embed_tokens) match the single-process run at every stage, with gradient
// accumulation, with layers cut into many buckets and with one bucket (which the embedding shares
// with other blocks); overlap on and off stay bitwise identical, in fp32 and bf16.
TEST_F(EngineTest, TiedEmbeddingRowsMatchTheSingleProcessRunAndOverlapStaysBitwise) {
  for (ModelKind kind : {ModelKind::gpt2, ModelKind::llama}) {
    Job job;
    job.kind = kind;
    job.T = 8;
    job.options = base_options(0, true);
    const RunResult want = reference(job);
    for (DType dtype : {DType::f32, DType::bf16})
      for (int stage = 0; stage <= 3; ++stage)
        for (std::size_t bucket : {std::size_t{0}, std::size_t{10'000'000}}) {
          const std::string what = kind_name(kind) + " stage " + std::to_string(stage) + " " +
                                   std::string(dtype_name(dtype)) + " bucket " + std::to_string(bucket);
          job.options = base_options(stage, true);
          job.options.compute_dtype = job.options.comm_dtype = dtype;
          job.options.embedding_gradient = EmbeddingGradient::rows;
          if (bucket != 0) job.options.reduce_bucket_size = job.options.first_reduce_bucket_size = bucket;
          MemoryTracker t1, t2;
          const RunResult on = run(job, *world_, job.B * world_->world_size(), t1);
          job.options.overlap_comm = false;
          const RunResult off = run(job, *world_, job.B * world_->world_size(), t2);
          ASSERT_EQ(on.params.size(), off.params.size()) << what;
          EXPECT_EQ(std::memcmp(on.params.data(), off.params.data(), on.params.size() * sizeof(float)), 0) << what;
          EXPECT_EQ(on.losses, off.losses) << what;
          if (dtype == DType::f32) expect_close(on, want, what);
        }
  }
}

// The rows block's buckets go out spread over the rest of backward, with two bucket buffers and
// buckets that span several layers (one stays open across blocks): none of them may take the
// buffer of a bucket still filling, and the results stay those of the single-process run.
TEST_F(EngineTest, TiedEmbeddingRowsWithBucketsSpanningLayersAndTwoBuffers) {
  Job job;
  job.kind = ModelKind::gpt2_wide_vocab;
  job.T = 8;
  job.options = base_options(0, true);
  const RunResult want = reference(job);
  for (int stage = 1; stage <= 3; ++stage)
    for (bool overlap : {true, false}) {
      const std::string what = "stage " + std::to_string(stage) + (overlap ? " overlap" : " no overlap");
      job.options = base_options(stage, overlap);
      job.options.embedding_gradient = EmbeddingGradient::rows;
      job.options.reduce_bucket_size = job.options.first_reduce_bucket_size = 2000;
      job.options.reduce_buffer_size = 4000;
      MemoryTracker tracker;
      expect_close(run(job, *world_, job.B * world_->world_size(), tracker), want, what);
    }
}

// train.activation_checkpointing: recomputing blocks' forward before their backward gives the
// same losses and parameters bit for bit, at every stage and on any number of ranks (1-4), and
// the activations the engine allocates are the plan's, smaller than without it.
TEST_F(EngineTest, ActivationCheckpointingChangesNoBitAndShrinksTheActivations) {
  for (DType dtype : {DType::f32, DType::bf16})
    for (ModelKind kind : {ModelKind::mlp, ModelKind::gpt2, ModelKind::llama})
      for (int stage = 0; stage <= 3; ++stage) {
        if (dtype == DType::bf16 && stage % 2 == 1) continue;  // bf16: stages 0 and 2 suffice
        Job job;
        job.kind = kind;
        job.T = kind == ModelKind::mlp ? 1 : 8;
        job.steps = 3;
        job.options = base_options(stage, true);
        job.options.compute_dtype = job.options.comm_dtype = dtype;
        MemoryTracker kept_tracker;
        RunResult kept = run(job, *world_, job.B * world_->world_size(), kept_tracker);
        for (int every : {1, 2}) {
          job.options.recompute_every = every;
          const std::string what = kind_name(kind) + " stage " + std::to_string(stage) + " " +
                                   std::string(dtype_name(dtype)) + " every " + std::to_string(every);
          MemoryTracker tracker;
          RunResult recomputed = run(job, *world_, job.B * world_->world_size(), tracker);
          EXPECT_EQ(recomputed.losses, kept.losses) << what;
          ASSERT_EQ(recomputed.params.size(), kept.params.size()) << what;
          EXPECT_EQ(std::memcmp(recomputed.params.data(), kept.params.data(), kept.params.size() * sizeof(float)), 0)
              << what;
          auto model = make_model(kind);
          const std::int64_t planned =
              plan_memory(*model, job.options, world_->world_size(), job.B, job.T, Device::cpu()).activations;
          EXPECT_EQ(tracker.stats(Space::host, MemCategory::activations).peak, planned) << what;
          EXPECT_LT(planned, kept_tracker.stats(Space::host, MemCategory::activations).peak) << what;
        }
      }
}

// optimizer.no_decay_embeddings: exactly the tensors a model flags as embeddings (GPT-2's wte and
// wpe, Llama's embed_tokens) skip weight decay; everything else gets the same update either way.
TEST_F(EngineTest, NoDecayEmbeddingsExemptsExactlyTheEmbeddingTensors) {
  for (ModelKind kind : {ModelKind::gpt2, ModelKind::llama}) {
    Job job;
    job.kind = kind;
    job.T = 8;
    job.steps = 1;
    job.options = base_options(2, true);
    job.options.adamw.weight_decay = 0.5f;
    MemoryTracker t1, t2;
    RunResult decayed = run(job, *world_, job.B * world_->world_size(), t1);
    job.options.adamw.no_decay_embeddings = true;
    RunResult exempt = run(job, *world_, job.B * world_->world_size(), t2);
    auto model = make_model(kind);
    std::size_t at = 0, embeddings = 0;
    for (std::size_t b = 0; b < model->num_blocks(); at += model->block(b).param_count(), ++b)
      for (const models::ParamTensor& t : model->block(b).layout().tensors()) {
        auto first = static_cast<std::ptrdiff_t>(at + t.offset), last = first + static_cast<std::ptrdiff_t>(t.numel);
        const bool same = std::equal(decayed.params.begin() + first, decayed.params.begin() + last,
                                     exempt.params.begin() + first);
        EXPECT_EQ(same, !t.embedding) << kind_name(kind) << " " << model->block(b).name() << "." << t.name;
        embeddings += t.embedding ? 1 : 0;
      }
    EXPECT_EQ(embeddings, kind == ModelKind::gpt2 ? 2u : 1u) << kind_name(kind);
  }
}

// In fp32 and in bf16 (16-bit parameters, activations and block gradients; fp32 accumulators
// across the two micro batches at stages 0 and 1; 16-bit buckets with communication in bf16).
// With the tied embedding's gradient as dense and as rows (whose gather buffers count as buckets).
TEST_F(EngineTest, ModelStateBytesEqualThePlan) {
  for (EmbeddingGradient embedding : {EmbeddingGradient::dense, EmbeddingGradient::rows})
  for (DType dtype : {DType::f32, DType::bf16})
  for (ModelKind kind : {ModelKind::mlp, ModelKind::gpt2, ModelKind::llama}) {
    if (kind == ModelKind::mlp && embedding == EmbeddingGradient::rows) continue;  // it has no embedding
    for (int stage = 0; stage <= 3; ++stage) {
      Job job;
      job.kind = kind;
      job.T = kind == ModelKind::mlp ? 1 : 8;
      job.steps = 2;
      job.options = base_options(stage, true);
      job.options.compute_dtype = job.options.comm_dtype = dtype;
      job.options.embedding_gradient = embedding;
      // Stage 3 on an even world: with the secondary partition, whose slices are parameter memory.
      if (stage == 3 && world_->world_size() % 2 == 0 && dtype == DType::bf16) job.options.zero_hpz_partition_size = 2;
      auto model = make_model(kind);
      MemoryPlan plan = plan_memory(*model, job.options, world_->world_size(), job.B, job.T, Device::cpu());
      MemoryTracker tracker;
      run(job, *world_, job.B * world_->world_size(), tracker);
      // After the run the engine is gone; its peaks remain and must be exactly the plan.
      std::string what = kind_name(kind) + " stage " + std::to_string(stage) + " " + std::string(dtype_name(dtype)) +
                         (embedding == EmbeddingGradient::rows ? " rows" : " dense");
      EXPECT_EQ(tracker.stats(Space::host, MemCategory::params).peak, plan.params) << what;
      EXPECT_EQ(tracker.stats(Space::host, MemCategory::grads).peak, plan.grads) << what;
      EXPECT_EQ(tracker.stats(Space::host, MemCategory::optimizer).peak, plan.optimizer) << what;
      EXPECT_EQ(tracker.stats(Space::host, MemCategory::buckets).peak, plan.buckets) << what;
      EXPECT_EQ(tracker.stats(Space::host, MemCategory::activations).peak, plan.activations) << what;
      std::int64_t gathered = tracker.stats(Space::host, MemCategory::gathered).peak;
      if (stage == 3) {
        EXPECT_GT(gathered, 0) << what;
        EXPECT_LE(gathered, plan.gathered_bound) << what;
      } else {
        EXPECT_EQ(gathered, 0) << what;
      }
      EXPECT_EQ(tracker.total(Space::host).current, 0) << what << ": the engine leaked";
    }
  }
}

// reduce_bucket_size: auto measures after the first step and re-cuts the buckets; training goes on
// as with a fixed size, and the bucket buffers stay within the plan (which counts auto's largest).
// Stage 0 in fp32 reduces the buckets where the gradient lies: no bucket buffers at all (only the
// embedding rows' gather buffers where auto exchanges rows, zero/lookup_rows.h).
TEST_F(EngineTest, AutoBucketSizeTrainsLikeTheSingleProcessRun) {
  Job job = gpt2_job(4, base_options(0, true));
  RunResult want = reference(job);
  for (int stage : {0, 2, 3}) {
    job.options = base_options(stage, true);
    job.options.reduce_bucket_size = kAutoBucketSize;
    job.options.reduce_buffer_size = 0;
    auto model = make_model(job.kind);
    const MemoryPlan plan = plan_memory(*model, job.options, world_->world_size(), job.B, job.T, Device::cpu());
    MemoryTracker tracker;
    expect_close(run(job, *world_, job.B * world_->world_size(), tracker), want, "auto stage " + std::to_string(stage));
    EXPECT_LE(tracker.stats(Space::host, MemCategory::buckets).peak, plan.buckets) << "stage " << stage;
    if (reduces_gradients_in_place(job.options, world_->world_size())) {
      const auto rows = rows_exchanged_block(*model, job.options, world_->world_size(), job.B, job.T, Device::cpu());
      const std::size_t rows_bytes =
          rows ? lookup_rows_buffer_bytes(*model, *rows, job.options, world_->world_size(), job.B, job.T) : 0;
      EXPECT_EQ(tracker.stats(Space::host, MemCategory::buckets).peak, static_cast<std::int64_t>(rows_bytes))
          << "stage " << stage;
    } else {
      EXPECT_GT(tracker.stats(Space::host, MemCategory::buckets).peak, 0) << "stage " << stage;
    }
  }
}

TEST_F(EngineTest, PartitionedStatesShrinkWithTheWorldSize) {
  auto model = make_model(ModelKind::gpt2);
  int N = world_->world_size();
  ZeroOptions o = base_options(0, true);
  MemoryPlan s0 = plan_memory(*model, o, N, 2, 8, Device::cpu());
  o.stage = 3;
  MemoryPlan s3 = plan_memory(*model, o, N, 2, 8, Device::cpu());
  // Stage 0 in fp32 keeps one gradient (reduced where backward writes it); stage 3 keeps a 1/N shard
  // of every model state (plus the padding that cuts each block into N aligned chunks).
  std::int64_t psi = static_cast<std::int64_t>(model->param_count());
  EXPECT_EQ(s0.model_states(), 4 * psi + 4 * psi + 12 * psi);
  EXPECT_LE(s3.model_states(), (4 + 4 + 12) * (psi + s3.padding_elements) / N);
  EXPECT_GE(s3.model_states(), (4 + 4 + 12) * psi / N);
}

TEST_F(EngineTest, AnOverflowOnOneRankSkipsTheStepEverywhereAndLowersTheScale) {
  int N = world_->world_size();
  Job job;
  job.kind = ModelKind::mlp;
  job.steps = 7;
  for (int stage : {0, 2, 3}) {
    job.options = base_options(stage, true);
    job.options.loss_scaling = true;
    job.options.loss_scaler = LossScalerOptions{0.0, 8, 3, 1, 1.0};
    auto model = make_model(job.kind);
    GlobalBatches batches(job.kind, *model, job.B * N, job.T);
    batches.poison(/*step=*/1, /*first_row of the last rank=*/(N - 1) * job.B);
    MemoryTracker tracker;
    RunResult r = run(job, *world_, job.B * N, tracker, &batches);
    std::string what = "stage " + std::to_string(stage);
    EXPECT_FALSE(r.stats[0].skipped) << what;
    EXPECT_TRUE(r.stats[1].skipped) << what << ": every rank must skip the overflowing step";
    EXPECT_EQ(r.stats[1].loss_scale, 256.0) << what;
    EXPECT_EQ(r.stats[2].loss_scale, 128.0) << what << ": the overflow halves the scale (hysteresis 1)";
    EXPECT_FALSE(r.stats[2].skipped) << what;
    // stats[i].loss_scale is the scale step i ran with. As DeepSpeed's DynamicLossScaler, the
    // clean step after a window of them (steps 2, 3, 4) doubles the scale: step 5's update, so
    // step 6 runs at 256 again.
    EXPECT_EQ(r.stats[5].loss_scale, 128.0) << what;
    EXPECT_EQ(r.stats[6].loss_scale, 256.0) << what << ": a window of clean steps doubles the scale";
  }
}

TEST_F(EngineTest, ASkippedStepLeavesParametersUnchanged) {
  int N = world_->world_size();
  Job job;
  job.kind = ModelKind::mlp;
  job.steps = 1;
  job.options = base_options(2, true);
  job.options.loss_scaling = true;
  auto model = make_model(job.kind);
  GlobalBatches batches(job.kind, *model, job.B * N, job.T);
  batches.poison(0, 0);
  MemoryTracker t1, t2;
  RunResult skipped = run(job, *world_, job.B * N, t1, &batches);
  job.steps = 0;
  RunResult initial = run(job, *world_, job.B * N, t2);
  EXPECT_TRUE(skipped.stats[0].skipped);
  EXPECT_EQ(skipped.params, initial.params);
}

// Two traced steps of GPT-2 at stage 3 (B = 2, T = 8, one micro-batch, nothing persistent) with
// secondary partition groups of hpz ranks: each step's spans.
std::vector<std::vector<trace::Span>> traced_steps(Communicator& world, const models::Model& model, int stage, int hpz,
                                                   bool peek_next_tokens = false) {
  auto ctx = models::ComputeContext::cpu(1);
  ZeroOptions o = base_options(stage, true);
  o.stage3_param_persistence_threshold = 0;
  o.gradient_accumulation_steps = 1;
  o.zero_hpz_partition_size = hpz;
  MemoryTracker tracker;
  const int B = 2, T = 8;
  ZeroEngine engine(model, *ctx, world, o, B, T, tracker);
  engine.init_parameters(7);
  GlobalBatches batches(ModelKind::gpt2, model, B * world.world_size(), T);
  std::vector<std::vector<trace::Span>> steps;
  for (int step = 0; step < 2; ++step) {
    trace::Timeline timeline(world.rank());
    timeline.begin_step(step, ctx->stream());
    engine.set_timeline(&timeline);
    std::vector<std::int32_t> next;
    ZeroEngine::PeekNextTokens peek;
    if (peek_next_tokens)
      peek = [&] {
        next = batches.tokens(step + 1, 0, world.rank() * B, B);
        return std::span<const std::int32_t>(next);
      };
    engine.train_step(
        [&](models::Activations& acts, int micro) { batches.load(acts, step, micro, world.rank() * B, B); },
        o.adamw.lr, 0, peek);
    engine.set_timeline(nullptr);
    timeline.end_step();
    steps.push_back(timeline.resolve());
  }
  return steps;
}

TEST_F(EngineTest, StageThreeGathersABlockOnlyForThePassesThatReadIt) {
  // GPT-2: the embedding (block 0) is read by its own forward and by the tied LM head's forward
  // and backward; its own backward scatters the output gradient and reads no parameter. With
  // nothing persistent, a step gathers each transformer block twice (forward and backward) and the
  // head once (kept from its forward into its backward). The embedding stays gathered from its
  // forward through the head's backward, and is gathered once more for the next step's forward,
  // as soon as the optimizer updated it. So the first step gathers it twice (its own forward found
  // nothing prefetched), the second once (its forward uses the first step's prefetch).
  auto model = make_model(ModelKind::gpt2);
  const std::size_t n = model->num_blocks();
  ASSERT_FALSE(model->block(0).backward_reads_params());
  const auto steps = traced_steps(*world_, *model, 3, 1);
  // The prefetch for the next step comes in the optimizer's pieces (publish_pieces), one gather.
  const std::size_t pieces =
      publish_pieces(make_partition_plan(*model, base_options(3, true), world_->world_size()))[0];
  ASSERT_GT(pieces, 1u);
  for (int step = 0; step < 2; ++step) {
    std::vector<int> gathers(n, 0);
    std::size_t embedding_pieces = 0;
    for (const trace::Span& span : steps[step]) {
      if (!span.name.starts_with("all_gather block ")) continue;
      const bool piece = span.name.find(" [") != std::string::npos;
      embedding_pieces += piece;
      if (!piece || span.name.find(" [0, ") != std::string::npos) ++gathers.at(span.args.at("block").get<std::size_t>());
    }
    EXPECT_EQ(embedding_pieces, pieces) << "the embedding's prefetch for the next step, step " << step;
    EXPECT_EQ(gathers[0], step == 0 ? 2 : 1) << "the embedding, step " << step;
    for (std::size_t b = 1; b + 1 < n; ++b) EXPECT_EQ(gathers[b], 2) << model->block(b).name();
    EXPECT_EQ(gathers[n - 1], 1) << "the LM head";
  }
}

// Stages 1/2: the optimizer publishes the forward's first block (the embedding) in pieces of at
// most a bucket, each all-gathered as soon as it is updated, and every other block whole.
TEST_F(EngineTest, StagesOneAndTwoPublishTheEmbeddingInPiecesAndTheOtherBlocksWhole) {
  auto model = make_model(ModelKind::gpt2);
  const std::size_t n = model->num_blocks();
  for (int stage : {1, 2}) {
    const std::vector<std::size_t> pieces =
        publish_pieces(make_partition_plan(*model, base_options(stage, true), world_->world_size()));
    ASSERT_GT(pieces[0], 1u) << "the embedding is not larger than a bucket: nothing to cut";
    const auto steps = traced_steps(*world_, *model, stage, 1);
    for (int step = 0; step < 2; ++step) {
      std::vector<std::size_t> gathers(n, 0);
      for (const trace::Span& span : steps[step])
        if (span.name.starts_with("all_gather params ")) ++gathers.at(span.args.at("block").get<std::size_t>());
      EXPECT_EQ(gathers[0], pieces[0]) << "the embedding, stage " << stage << " step " << step;
      for (std::size_t b = 1; b < n; ++b) EXPECT_EQ(gathers[b], 1u) << model->block(b).name() << ", stage " << stage;
    }
  }
}

// With nothing prefetched and nothing persistent, stage 3 holds one block at a time, and the tied
// embedding through the forward: a transformer block and the table together are the most gathered
// at once, and `plan` says exactly that (with, where the table's gradient goes as rows, the most
// the update's gather of the next lookup's rows can take: first_rows.h). Told the next tokens, the
// run stays within the plan.
TEST_F(EngineTest, StageThreeKeepsTheTiedEmbeddingThroughTheForwardAndThePlanCountsIt) {
  Job job = gpt2_job(2, base_options(3, true));
  job.options.stage3_prefetch_bucket_size = 0;
  job.options.stage3_param_persistence_threshold = 0;
  auto model = make_model(job.kind);
  const PartitionPlan partition = make_partition_plan(*model, job.options, world_->world_size());
  ASSERT_EQ(model->block(model->num_blocks() - 1).tied_block(), std::optional<std::size_t>(0));
  const auto table_and_layer =
      static_cast<std::int64_t>((partition.block(0).padded_numel + partition.block(1).padded_numel) * sizeof(float));
  const MemoryPlan plan = plan_memory(*model, job.options, world_->world_size(), job.B, job.T, Device::cpu());
  const bool rows = rows_exchanged_block(*model, job.options, world_->world_size(), job.B, job.T, Device::cpu()).has_value();
  EXPECT_EQ(rows, world_->world_size() > 1);
  const auto rows_bound = static_cast<std::int64_t>(
      rows ? first_rows_buffer_bytes(partition.block(0).padded_numel, sizeof(float), world_->world_size(), job.B, job.T)
           : 0);
  EXPECT_EQ(plan.gathered_bound, table_and_layer + rows_bound);
  MemoryTracker tracker;
  run(job, *world_, job.B * world_->world_size(), tracker);
  EXPECT_EQ(tracker.stats(Space::host, MemCategory::gathered).peak, table_and_layer);
  job.peek_next_tokens = true;
  MemoryTracker told;
  run(job, *world_, job.B * world_->world_size(), told);
  EXPECT_LE(told.stats(Space::host, MemCategory::gathered).peak, plan.gathered_bound);
  EXPECT_GE(told.stats(Space::host, MemCategory::gathered).peak, table_and_layer);
}

// The tests of the next lookup's rows: GPT-2 with a 1000-row table, 8 tokens a sequence, the
// table's gradient as rows.
Job rows_job(int stage, bool overlap, int steps) {
  Job job;
  job.kind = ModelKind::gpt2_wide_vocab;
  job.T = 8;
  job.steps = steps;
  job.options = base_options(stage, overlap);
  job.options.embedding_gradient = EmbeddingGradient::rows;
  return job;
}

// Stages 1-3 told the next step's first tokens (zero/first_rows.h): the update gathers only the
// rows the next lookup reads, and the rest of the table while the forward runs, before the LM head
// reads it (stage 3 in pieces, stages 1/2 whole once the lookup is done). The lookup reads the same
// values, so the run is bitwise the one that gathers the whole table: overlap on and off, with
// gradient accumulation, with evaluations between steps (whose forward gathers the whole table),
// with the secondary partition, in fp32 and bf16; also where one rank does not know its next tokens
// (then no rank gathers rows). The rows' buffers stay within the memory plan.
TEST_F(EngineTest, TheNextLookupsRowsGoFirstAndChangeNoBit) {
  if (world_->world_size() < 2) GTEST_SKIP() << "one rank exchanges no rows";
  for (int stage : {1, 2, 3})
    for (DType dtype : {DType::f32, DType::bf16})
      for (bool overlap : {true, false})
        for (int hpz : {1, 2}) {
          if (hpz > 1 && (stage < 3 || world_->world_size() % hpz != 0)) continue;
          const std::string what = "stage " + std::to_string(stage) + " " + std::string(dtype_name(dtype)) +
                                   (overlap ? " overlap" : " no overlap") + " hpz " + std::to_string(hpz);
          Job job = rows_job(stage, overlap, 7);
          job.eval_every = 3;
          job.options.compute_dtype = job.options.comm_dtype = dtype;
          job.options.zero_hpz_partition_size = hpz;
          MemoryTracker t1, t2;
          const RunResult whole = run(job, *world_, job.B * world_->world_size(), t1);
          job.peek_next_tokens = true;
          const RunResult rows_first = run(job, *world_, job.B * world_->world_size(), t2);
          EXPECT_EQ(rows_first.rows_gathers, job.steps) << what << ": every update gathers the next lookup's rows";
          EXPECT_EQ(rows_first.losses, whole.losses) << what;
          EXPECT_EQ(rows_first.eval_losses, whole.eval_losses) << what;
          ASSERT_EQ(rows_first.params.size(), whole.params.size()) << what;
          EXPECT_EQ(std::memcmp(rows_first.params.data(), whole.params.data(), whole.params.size() * sizeof(float)), 0)
              << what;
          auto model = make_model(job.kind);
          const MemoryPlan plan = plan_memory(*model, job.options, world_->world_size(), job.B, job.T, Device::cpu());
          EXPECT_LE(t2.stats(Space::host, MemCategory::gathered).peak, plan.gathered_bound) << what;
          if (stage < 3) {
            EXPECT_GT(t2.stats(Space::host, MemCategory::gathered).peak, 0) << what;
          }
          if (dtype != DType::f32 || !overlap || hpz != 1) continue;
          job.rank_without_next_tokens = 1;
          MemoryTracker t3;
          const RunResult one_unknown = run(job, *world_, job.B * world_->world_size(), t3);
          EXPECT_EQ(one_unknown.losses, whole.losses) << what << ": rank 1 does not know its next tokens";
          EXPECT_EQ(one_unknown.rows_gathers, 0) << what << ": so no rank gathers rows";
          job.rank_without_next_tokens = -1;
          job.options.lookup_rows_first = LookupRowsFirst::never;
          MemoryTracker t5;
          const RunResult switched_off = run(job, *world_, job.B * world_->world_size(), t5);
          EXPECT_EQ(switched_off.losses, whole.losses) << what << ": lookup_rows_first false";
          EXPECT_EQ(switched_off.rows_gathers, 0) << what << ": lookup_rows_first false gathers no rows";
          if (stage < 3) {
            EXPECT_EQ(t5.stats(Space::host, MemCategory::gathered).peak, 0) << what;
            EXPECT_EQ(plan_memory(*model, job.options, world_->world_size(), job.B, job.T, Device::cpu()).gathered_bound,
                      0)
                << what << ": and the plan counts none";
          }
          // auto: whichever way the ranks' times choose at each update, the bits are the same.
          job.options.lookup_rows_first = LookupRowsFirst::automatic;
          MemoryTracker t6;
          const RunResult chosen = run(job, *world_, job.B * world_->world_size(), t6);
          EXPECT_EQ(chosen.losses, whole.losses) << what << ": lookup_rows_first auto";
          EXPECT_EQ(chosen.eval_losses, whole.eval_losses) << what << ": lookup_rows_first auto";
          EXPECT_EQ(std::memcmp(chosen.params.data(), whole.params.data(), whole.params.size() * sizeof(float)), 0)
              << what << ": lookup_rows_first auto";
          job.options.lookup_rows_first = LookupRowsFirst::always;
          // A source whose peek shows another batch than the next load hands out is a bug the
          // engine refuses, on every rank alike (no collective is left waiting).
          job.rank_without_next_tokens = -1;
          job.peek_offset = 2;
          MemoryTracker t4;
          EXPECT_THROW(run(job, *world_, job.B * world_->world_size(), t4), std::logic_error) << what;
        }
  // fp16 with a first loss scale that overflows: the skipped steps' updates gather nothing, the
  // step after one gathers the whole table, and the run is still bitwise the one without tokens.
  for (int stage : {1, 2, 3}) {
    Job job = rows_job(stage, true, 7);
    job.options.compute_dtype = job.options.comm_dtype = DType::f16;
    job.options.loss_scaling = true;
    job.options.loss_scaler = LossScalerOptions{0.0, 20, 1000, 1, 1.0};
    MemoryTracker t1, t2;
    const RunResult whole = run(job, *world_, job.B * world_->world_size(), t1);
    job.peek_next_tokens = true;
    const RunResult rows_first = run(job, *world_, job.B * world_->world_size(), t2);
    const auto skipped =
        std::count_if(whole.stats.begin(), whole.stats.end(), [](const StepStats& s) { return s.skipped; });
    ASSERT_GT(skipped, 0) << "no step overflowed, stage " << stage;
    ASSERT_LT(skipped, job.steps) << "every step overflowed, stage " << stage;
    EXPECT_EQ(rows_first.rows_gathers, job.steps - skipped) << "stage " << stage;
    EXPECT_EQ(rows_first.losses, whole.losses) << "stage " << stage;
    EXPECT_EQ(std::memcmp(rows_first.params.data(), whole.params.data(), whole.params.size() * sizeof(float)), 0)
        << "stage " << stage;
  }
}

// lookup_rows_first: auto on the emulated accelerator, whose update takes the time its memory rate
// gives it. Where every rank's update outlasts the table's gather, the updates gather the whole
// table and no rows once both are measured. Where one rank votes for the rows, every rank keeps
// to them: ranks that chose alone would issue different collectives.
TEST_F(EngineTest, LookupRowsFirstAutoGathersTheWholeTableWhereItsGatherEndsWithinTheUpdate) {
  if (world_->world_size() < 2) GTEST_SKIP() << "one rank exchanges no rows";
  auto model = make_model(ModelKind::gpt2_wide_vocab);
  for (int stage : {1, 2, 3}) {
    Job job = rows_job(stage, true, 6);
    job.options.gradient_accumulation_steps = 1;
    job.options.lookup_rows_first = LookupRowsFirst::automatic;
    job.peek_next_tokens = true;
    const PartitionPlan plan = make_partition_plan(*model, job.options, world_->world_size());
    // A memory rate at which the update of this rank's shard takes 250 ms: the gather of a table of
    // 8 000 elements between processes on one machine takes a small part of that, even with the
    // time each of its pieces waits for ranks out of step (gather_time.h).
    const double update_s = 0.25;
    const double slow = static_cast<double>(plan.shard_numel()) * 32.0 / update_s;
    job.emulated = models::DeviceRates{.flops_per_s = 1e12, .bytes_per_s = slow};
    MemoryTracker t1;
    const RunResult all_slow = run(job, *world_, job.B * world_->world_size(), t1);
    // Unmeasured, a rank votes for the rows: the first update (no update measured yet) and, at
    // stages 1/2, the second (the table is first gathered whole after the first update's rows).
    EXPECT_EQ(all_slow.rows_gathers, stage < 3 ? 2 : 1) << "stage " << stage << ": then no more rows";
    // Rank 0 votes for the rows at every update (with lookup_rows_first true it always does), the
    // others for the whole table.
    if (world_->rank() == 0) job.options.lookup_rows_first = LookupRowsFirst::always;
    MemoryTracker t2;
    const RunResult one_for_rows = run(job, *world_, job.B * world_->world_size(), t2);
    EXPECT_EQ(one_for_rows.rows_gathers, job.steps) << "stage " << stage << ": every rank keeps the rows";
  }
}

// The rows' gather in the trace: the first step's update gathers the rows and a quarter of the
// table's pieces, the second step's forward the rest of them, and never the whole table at once.
TEST_F(EngineTest, StageThreeRowsFirstGathersTheRowsThenTheTableInPieces) {
  if (world_->world_size() < 2) GTEST_SKIP() << "one rank exchanges no rows";
  auto model = make_model(ModelKind::gpt2_wide_vocab);
  const std::size_t n = model->num_blocks();
  const auto steps = traced_steps(*world_, *model, 3, 1, /*peek_next_tokens=*/true);
  std::vector<std::size_t> rows(2, 0), pieces(2, 0), whole(2, 0);
  for (int step = 0; step < 2; ++step)
    for (const trace::Span& span : steps[step]) {
      if (!span.name.starts_with("all_gather block 0")) continue;
      if (span.name.starts_with("all_gather block 0 rows")) ++rows[step];
      else if (span.name.starts_with("all_gather block 0 [")) ++pieces[step];
      else ++whole[step];
    }
  // The forward steps before the head's (the first that reads the whole table) take one piece each.
  const std::size_t table_pieces = n - 1;
  EXPECT_EQ(rows[0], 1u);
  EXPECT_EQ(pieces[0], (table_pieces + 3) / 4) << "behind the rows, in the update";
  EXPECT_EQ(whole[0], 1u) << "the first step's own forward found nothing gathered";
  EXPECT_EQ(rows[1], 1u) << "again for the third step";
  EXPECT_EQ(pieces[1], table_pieces) << "the rest of the first's, and a quarter behind the next rows";
  EXPECT_EQ(whole[1], 0u);
}

// Stages 1/2 in the trace: the update all-gathers the table's rows instead of the table, and the
// next forward issues the whole table's all-gather once, after the lookup has read the rows. The
// update takes the forward's next block (within the prefetch budget) before the table, so that its
// all-gather keeps the link busy while the table is updated, and the later blocks after it.
TEST_F(EngineTest, StagesOneAndTwoRowsFirstAllGatherTheTableAfterTheLookup) {
  if (world_->world_size() < 2) GTEST_SKIP() << "one rank exchanges no rows";
  auto model = make_model(ModelKind::gpt2_wide_vocab);
  for (int stage : {1, 2}) {
    const auto steps = traced_steps(*world_, *model, stage, 1, /*peek_next_tokens=*/true);
    for (int step = 0; step < 2; ++step) {
      std::size_t rows = 0, pieces = 0, whole = 0;
      std::optional<trace::Clock::time_point> lookup_end, table_issued, rows_begin, next_block_begin, last_layer_begin;
      const std::size_t last_layer = model->num_blocks() - 2;
      for (const trace::Span& span : steps[step]) {
        if (span.name.starts_with("forward ") && span.args.value("block", -1) == 0) lookup_end = span.end;
        if (!span.name.starts_with("all_gather params ")) continue;
        const auto block = span.args.at("block").get<std::size_t>();
        if (block == 1) next_block_begin = span.begin;
        if (block == last_layer) last_layer_begin = span.begin;
        if (block != 0) continue;
        if (span.name.ends_with(" rows")) {
          ++rows;
          rows_begin = span.begin;
        } else if (span.name.find(" [") != std::string::npos) {
          ++pieces;
        } else {
          ++whole;
          // Issued no later than it started, less the time it queued behind the comm stream's work.
          const double queued_us = span.args.value("queued_us", 0.0);
          table_issued = span.begin - std::chrono::duration_cast<trace::Clock::duration>(
                                          std::chrono::duration<double, std::micro>(queued_us));
        }
      }
      const std::string what = "stage " + std::to_string(stage) + " step " + std::to_string(step);
      EXPECT_EQ(rows, 1u) << what << ": the update gathers the next lookup's rows";
      EXPECT_EQ(pieces, 0u) << what << ": and none of the table's pieces";
      // The first step's forward reads the table set at start-up; the second's the first's rows.
      EXPECT_EQ(whole, step == 0 ? 0u : 1u) << what;
      if (step == 1) {
        ASSERT_TRUE(lookup_end && table_issued) << what;
        EXPECT_GE(*table_issued, *lookup_end) << what;
      }
      // One comm stream: the all-gathers start in the order they were issued.
      ASSERT_TRUE(rows_begin && next_block_begin && last_layer_begin) << what;
      EXPECT_LT(*next_block_begin, *rows_begin) << what << ": the forward's next block goes before the table";
      EXPECT_GT(*last_layer_begin, *rows_begin) << what << ": the last layer after it";
    }
  }
}

// zero_hpz_partition_size (ZeRO++'s secondary partition): groups of 2 ranks keep forward's
// gathered blocks split between them, and every later gather of a block before the next optimizer
// step goes within the group. The gathered bytes are the same, so the run is bitwise that of plain
// stage 3, overlap on and off, with gradient accumulation (the second micro-batch's forward
// gathers within the group too) and in bf16.
TEST_F(EngineTest, SecondaryPartitionChangesNoBit) {
  if (world_->world_size() % 2 != 0) GTEST_SKIP() << "groups of 2 ranks need an even world";
  for (DType dtype : {DType::f32, DType::bf16})
    for (ModelKind kind : {ModelKind::gpt2, ModelKind::llama}) {
      Job job;
      job.kind = kind;
      job.T = 8;
      job.steps = 3;
      job.options = base_options(3, true);
      job.options.compute_dtype = job.options.comm_dtype = dtype;
      MemoryTracker t0;
      RunResult plain = run(job, *world_, job.B * world_->world_size(), t0);
      for (bool overlap : {true, false}) {
        job.options.overlap_comm = overlap;
        job.options.zero_hpz_partition_size = 2;
        MemoryTracker t1;
        RunResult grouped = run(job, *world_, job.B * world_->world_size(), t1);
        const std::string what = kind_name(kind) + " " + std::string(dtype_name(dtype)) + (overlap ? " overlap" : "");
        ASSERT_EQ(grouped.params.size(), plain.params.size()) << what;
        EXPECT_EQ(std::memcmp(grouped.params.data(), plain.params.data(), plain.params.size() * sizeof(float)), 0)
            << what;
        EXPECT_EQ(grouped.losses, plain.losses) << what;
        EXPECT_GT(t1.stats(Space::host, MemCategory::params).peak, t0.stats(Space::host, MemCategory::params).peak)
            << what << ": the group's slices are parameter memory";
      }
    }
}

// Which gathers go within the group (GPT-2, nothing persistent, one micro-batch): a transformer
// block's forward gathers from every rank and its backward within the group; the LM head keeps its
// forward's gather into its backward, and the tied embedding stays gathered from its forward to
// the head's backward; the embedding's forward (the first step's) and the next step's prefetch
// after the optimizer gather from every rank.
TEST_F(EngineTest, SecondaryPartitionGathersWithinTheGroupUntilTheOptimizerStep) {
  if (world_->world_size() % 2 != 0) GTEST_SKIP() << "groups of 2 ranks need an even world";
  auto model = make_model(ModelKind::gpt2);
  const std::size_t n = model->num_blocks();
  const auto steps = traced_steps(*world_, *model, 3, 2);
  for (int step = 0; step < 2; ++step) {
    std::vector<int> world_gathers(n, 0), group_gathers(n, 0);
    for (const trace::Span& span : steps[step]) {
      if (!span.name.starts_with("all_gather block ")) continue;
      // The prefetch after the optimizer comes in pieces: its first piece counts the gather.
      if (span.name.find(" [") != std::string::npos && span.name.find(" [0, ") == std::string::npos) continue;
      const auto block = span.args.at("block").get<std::size_t>();
      ++(span.args.at("group").get<bool>() ? group_gathers : world_gathers).at(block);
    }
    EXPECT_EQ(world_gathers[0], step == 0 ? 2 : 1) << "the embedding, step " << step;
    EXPECT_EQ(group_gathers[0], 0) << "the embedding, step " << step;
    for (std::size_t b = 1; b + 1 < n; ++b) {
      EXPECT_EQ(world_gathers[b], 1) << model->block(b).name();
      EXPECT_EQ(group_gathers[b], 1) << model->block(b).name();
    }
    EXPECT_EQ(world_gathers[n - 1], 1) << "the LM head";
    EXPECT_EQ(group_gathers[n - 1], 0) << "the LM head";
  }
}

TEST_F(EngineTest, TheCommWorkspaceIsSizedAtStartUpAndNeverGrowsInAStep) {
  // The ring's partial sums (3 ranks and more) and, on a GPU, the staging of device buffers: sized
  // from the plan when the engine is built, so no collective grows them on the comm thread.
  for (int stage = 0; stage <= 3; ++stage) {
    const Job job = gpt2_job(2, base_options(stage, true));
    auto model = make_model(job.kind);
    auto ctx = models::ComputeContext::cpu(1);
    MemoryTracker tracker;
    ZeroEngine engine(*model, *ctx, *world_, job.options, job.B, job.T, tracker);
    engine.init_parameters(7);
    const std::size_t reserved = world_->workspace_bytes();
    if (stage > 0 && world_->world_size() > 1) {
      EXPECT_GT(reserved, 0u) << "stage " << stage;
    }
    GlobalBatches batches(job.kind, *model, job.B * world_->world_size(), job.T);
    for (int step = 0; step < job.steps; ++step)
      engine.train_step(
          [&](models::Activations& acts, int micro) { batches.load(acts, step, micro, world_->rank() * job.B, job.B); },
          job.options.adamw.lr);
    EXPECT_EQ(world_->workspace_bytes(), reserved) << "stage " << stage << ": the workspace grew during a step";
  }
}

TEST_F(EngineTest, ReportsCommunicationAndItsExposedPart) {
  // With overlap off the compute stream waits for every reduction right after launching it, so
  // the exposed time is real (measured from events around each wait) and within the step. On one
  // rank a collective is a local copy that may be done before the wait: nothing to expose then.
  Job job = gpt2_job(2, base_options(2, false));
  MemoryTracker tracker;
  RunResult r = run(job, *world_, job.B * world_->world_size(), tracker);
  for (const StepStats& s : r.stats) {
    EXPECT_GT(s.comm_ms, 0.0);
    if (world_->world_size() > 1) {
      EXPECT_GT(s.exposed_comm_ms, 0.0);
    }
    EXPECT_LT(s.exposed_comm_ms, s.step_ms);
    // The MPI comm thread copies and reduces during the step; one thread's CPU time fits in the step.
    EXPECT_GT(s.comm_cpu_ms, 0.0);
    EXPECT_LE(s.comm_cpu_ms, s.step_ms + 1.0);
    EXPECT_GT(s.step_ms, 0.0);
    EXPECT_GT(s.grad_norm, 0.0);
  }
}

TEST_F(EngineTest, StepsAfterTheFirstAllocateNothing) {
  // Stage 2/3 gradients and stage 3 gathered blocks come and go every micro-batch: from the
  // memory pool, so after the first step nothing is taken from the system (on a GPU a cudaMalloc
  // or cudaFree inside a step would synchronise the device and serialise the comm stream).
  for (int stage = 0; stage <= 3; ++stage) {
    Job job = gpt2_job(3, base_options(stage, true));
    MemoryTracker tracker;
    RunResult r = run(job, *world_, job.B * world_->world_size(), tracker);
    ASSERT_EQ(r.stats.size(), 3u);
    for (std::size_t step = 1; step < r.stats.size(); ++step)
      EXPECT_EQ(r.stats[step].allocations, 0) << "stage " << stage << ", step " << step;
  }
}

}  // namespace
}  // namespace zt
