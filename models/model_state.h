// Single-process storage and execution: full flat parameters and gradients for every block
// (charged to MemCategory::params / grads), and helpers that run a whole model's forward and
// backward. The ZeRO engine owns storage itself and calls forward_block/backward_block directly.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/activations.h"
#include "models/model.h"

namespace zt::models {

class ModelState {
 public:
  ModelState(const Model& model, Device device, DType dtype, MemoryTracker& tracker = MemoryTracker::process());

  std::size_t num_blocks() const { return params_.size(); }
  BufferView params(std::size_t block) const { return params_.at(block).view(); }
  BufferView grads(std::size_t block) const { return grads_.at(block).view(); }
  BlockParams block_params(std::size_t block) const;

  // GPT-2-style initialisation from seed (init.h): computed in fp32 on the host, then rounded to
  // the storage dtype and copied, so every device starts from the same values.
  void init(std::uint64_t seed);
  // All parameters as fp32 on the host, block after block, and back.
  std::vector<float> params_f32() const;
  std::vector<float> grads_f32() const;
  void set_params_f32(const std::vector<float>& flat);
  void zero_grad(ComputeContext& ctx);

 private:
  const Model* model_;
  Device device_;
  DType dtype_;
  std::vector<Buffer> params_, grads_;
};

// Runs block i's forward on the activations; p.tied_params must be given when the block is tied.
void forward_block(ComputeContext& ctx, const Model& model, std::size_t i, const BlockParams& p, Activations& acts);
// Runs block i's backward: accumulates into grads (and tied_grads), overwrites acts.d_input(i).
// loss_scale multiplies the loss gradient (gradient accumulation: 1/micro_steps; fp16: the scale).
// tied_grads_done, if given, is called exactly once, as soon as tied_grads holds all the block adds
// to it (Block::tied_grads_done_share of the way through; at the end for most blocks).
void backward_block(ComputeContext& ctx, const Model& model, std::size_t i, const BlockParams& p, BufferView grads,
                    BufferView tied_grads, Activations& acts, float loss_scale,
                    const std::function<void()>& tied_grads_done = {});

// Whole-model helpers on a ModelState: forward returns the mean loss (synchronises).
float forward(ComputeContext& ctx, const Model& model, const ModelState& state, Activations& acts);
void backward(ComputeContext& ctx, const Model& model, ModelState& state, Activations& acts, float loss_scale = 1.0f);

}  // namespace zt::models
