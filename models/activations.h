// Every activation of one micro batch (B, T) of a model, in one arena charged to
// MemCategory::activations on the compute device:
//   - the model input (tokens or features) and targets (int32, -1 = ignore),
//   - each block's output and saved tensors (kept from forward to backward),
//   - one scratch region shared by all blocks (the largest any block needs; only one block runs
//     at a time),
//   - with activation checkpointing (recompute_every = k > 0), one region shared by the saved
//     tensors of the recomputed blocks: every k-th block that may be recomputed (see
//     recomputes()) keeps only its output from forward, and its forward runs again just before its
//     backward, refilling the region. Forward is deterministic, so backward reads the same values
//     bit for bit and the losses do not change. The loss block's saved tensors share the region
//     too (its backward follows its forward before any recompute),
//   - two gradient buffers for the stream between blocks (d_output of block i is d_input of
//     block i+1; they alternate).
// bytes_needed() predicts the arena's size without allocating, for planning.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "models/model.h"
#include "core/buffer.h"

namespace zt::models {

// A micro batch of tokens as the host prepares it: the tokens, their targets, and the token index
// that the GPU's embedding backward reads (positions grouped by token). Preparing it is host work
// that can run ahead of the device (runtime/train's batch prefetch); Activations::set_tokens only
// uploads it.
struct TokenBatch {
  std::vector<std::int32_t> tokens, targets;          // B*T each
  std::vector<std::int32_t> positions, starts, ids;   // the index: positions by token, group starts, group tokens
  int valid_targets = 0;                              // targets that are not ignored (-1)

  // Fills the index and valid_targets from tokens and targets, reusing the vectors' memory.
  void build_index();
};

class Activations {
 public:
  Activations(const Model& model, int B, int T, Device device, DType dtype,
              MemoryTracker& tracker = MemoryTracker::process(), int recompute_every = 0);

  static std::size_t bytes_needed(const Model& model, int B, int T, Device device, DType dtype,
                                  int recompute_every = 0);
  // Whether block i's forward is run again before its backward: with recompute_every = k > 0,
  // blocks 0, k, 2k, ... among those that may be recomputed. A block may be when it is not the
  // loss block (its backward follows its forward at once: nothing to save) and its backward reads
  // its parameters (so that at ZeRO-3 the parameters the recompute reads are the ones backward
  // gathers anyway: GPT-2's embedding is neither recomputed nor gathered for backward).
  static std::vector<bool> recomputed_blocks(const Model& model, int recompute_every);
  bool recomputes(std::size_t block) const { return recomputed_.at(block); }
  std::size_t bytes() const { return arena_.bytes(); }

  int B() const { return B_; }
  int T() const { return T_; }
  Device device() const { return device_; }
  DType dtype() const { return dtype_; }

  // The stream batches are copied up on and losses read back from: the compute stream, so that a
  // batch never overwrites one that kernels enqueued before are still reading. Needed on a GPU;
  // on the CPU copies are plain memcpy on the calling thread.
  void set_stream(Stream& stream) { stream_ = &stream; }

  // Loads one micro batch from the host. On a GPU the batch goes through one of two page-locked
  // staging buffers and an asynchronous copy on the stream (no device synchronisation). Token
  // models take B*T token ids; feature models take B*T*input_width() floats (rounded to the
  // compute dtype). targets: B*T int32, -1 ignored. Throws std::invalid_argument on a size or
  // token-range mistake.
  void set_tokens(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets);
  // The same from a batch whose token index is built already (TokenBatch::build_index).
  void set_tokens(const TokenBatch& batch);
  void set_features(std::span<const float> features, std::span<const std::int32_t> targets);
  int valid_targets() const { return valid_targets_; }
  // A training step's forward also computes the loss's gradient over the logits, for a backward
  // given this loss_scale (backward_block's); nullopt (evaluations, and the default) computes the
  // losses alone. BlockIO::dloss_in_forward carries it to the loss block.
  void set_loss_gradient_in_forward(std::optional<float> loss_scale) { loss_scale_in_forward_ = loss_scale; }

  // The views block i works with (see block.h).
  BlockIO io(std::size_t block) const;
  BufferView output(std::size_t block) const;
  BufferView d_output(std::size_t block) const;  // empty for the loss block
  BufferView d_input(std::size_t block) const;   // empty for block 0
  BufferView input() const { return view(input_); }
  BufferView targets() const { return view(targets_); }

  // The per-position losses of the last forward (f32, B*T), on the device.
  BufferView losses() const { return output(model_->num_blocks() - 1); }
  // Sum of the per-position losses of the last forward (copies B*T floats to the host after the
  // stream has finished: for tests and tools, not for the training step).
  double loss_sum() const;
  // loss_sum() / valid_targets() (0 when every target is ignored).
  float mean_loss() const;

 private:
  struct Slot {
    std::size_t offset = 0;  // bytes into the arena
    std::size_t numel = 0;
    DType dtype = DType::f32;
  };
  struct Plan;
  static Plan make_plan(const Model& model, int B, int T, Device device, DType dtype, int recompute_every);
  BufferView view(const Slot& s) const;
  // Host bytes to the slot; staged copies are collected and sent by flush_uploads().
  void upload(const Slot& s, const void* host, std::size_t bytes);
  void flush_uploads();

  const Model* model_;
  int B_, T_;
  Device device_;
  DType dtype_;
  Buffer arena_;
  Slot input_, targets_, index_positions_, index_starts_, index_tokens_;
  int index_groups_ = 0;
  std::vector<Slot> outputs_;
  std::vector<std::vector<Slot>> saved_;
  std::vector<std::vector<Slot>> scratch_;
  std::vector<bool> recomputed_;
  Slot grad_stream_[2];
  int valid_targets_ = 0;
  std::optional<float> loss_scale_in_forward_;
  ops::TokenIndex token_index_;
  Stream* stream_ = nullptr;
  // GPU only: two page-locked staging buffers used in turn, each with the event after which the
  // device has finished reading it.
  Buffer staging_[2];
  Event staging_free_[2];
  int staging_turn_ = 0;
  std::size_t staged_bytes_ = 0;
  std::vector<std::pair<Slot, std::size_t>> staged_;  // slot, offset in the staging buffer
};

}  // namespace zt::models
