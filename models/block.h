// The unit the ZeRO engine schedules: a block of layers with one flat parameter.
//
// A model is an ordered list of blocks. Block i reads the output of block i-1 (block 0 reads the
// model input) and writes its own output; the last block is the loss block, whose output is the
// per-position loss (f32). Blocks own no storage: parameters and gradients are flat views passed
// in by the caller, activations live in an Activations object (activations.h).
//
// Gradient rules (so micro-batches accumulate):
//   - parameter gradients ACCUMULATE (+=) into the grad views; zero them between steps;
//   - the gradient of the block's input (d_input) is OVERWRITTEN;
//   - the loss block ignores d_output and uses dloss = loss_scale / (non-ignored targets).
// Weight tying: a block whose tied_block() names block j also reads block j's flat parameter in
// forward/backward and accumulates into block j's gradient. Block j's gradient is complete only
// after both have run backward (GPT-2: the head reuses the embedding's wte).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/compute_context.h"
#include "models/ops/common.h"
#include "models/param_layout.h"

namespace zt::models {

// A tensor a block keeps in the activations: saved from forward to backward, or scratch that is
// only needed during one call and shared by all blocks.
struct ActivationSlot {
  std::string name;
  std::size_t numel = 0;
  bool f32 = false;  // f32 regardless of the compute dtype (LayerNorm statistics, losses)
};

// The activations one block sees during a call; views are on the compute device.
// dL/d(loss of one non-ignored position) for a mean over `valid` positions, times loss_scale.
inline float loss_dloss(float loss_scale, int valid) {
  return valid > 0 ? loss_scale / static_cast<float>(valid) : 0.0f;
}

struct BlockIO {
  int B = 0, T = 0;
  BufferView input;                  // previous block's output; the model input for block 0
  BufferView output;                 // this block's output
  std::vector<BufferView> saved;     // in the order of saved_slots()
  std::vector<BufferView> scratch;   // in the order of scratch_slots()
  BufferView targets;                // i32 (B*T); read by the loss block
  const ops::TokenIndex* token_index = nullptr;  // of the model input, for the embedding backward
  // Loss block: set in a training step's forward (Activations::set_loss_gradient_in_forward), the
  // dL/d(loss of one non-ignored position) its backward will be given. The forward then writes the
  // logits' gradient over them with the losses (ops::classifier_forward), one pass fewer.
  std::optional<float> dloss_in_forward;
};

// What a lookup block's backward does, for a block whose backward does only that (an embedding):
// position t of a sequence whose token is k adds its output gradient, a row of `width` values, to
// the row starting at token_table + k * width of the block's flat gradient and, if the block has a
// position table, to the row starting at *position_table + t * width. It lets the engine send a
// lookup's gradient as the rows a batch touched (zero/lookup_rows.h) instead of the whole table.
struct LookupRows {
  std::size_t width = 0;
  std::size_t token_table = 0;
  std::optional<std::size_t> position_table;
};

struct BlockParams {
  BufferView params;       // this block's flat parameter (param_count() elements, compute dtype)
  BufferView tied_params;  // the flat parameter of tied_block(), if any
};

struct BlockGrads {
  BufferView grads;       // this block's flat gradient: accumulated into
  BufferView tied_grads;  // the flat gradient of tied_block(), if any: accumulated into
  BufferView d_output;    // gradient of this block's output (ignored by the loss block)
  BufferView d_input;     // gradient of this block's input: overwritten; empty for block 0
  float dloss = 0.0f;     // loss block only: dL/d(loss of one non-ignored position)
  // Called once the block has added all it adds into tied_grads, before the rest of its backward
  // (empty: nobody asks), so that the tied gradient's reduction can start while that rest runs.
  std::function<void()> tied_grads_done;
  void tied_grads_complete() const {
    if (tied_grads_done) tied_grads_done();
  }
};

class Block {
 public:
  virtual ~Block() = default;

  virtual std::string name() const = 0;
  virtual const ParamLayout& layout() const = 0;
  std::size_t param_count() const { return layout().numel(); }
  virtual std::optional<std::size_t> tied_block() const { return std::nullopt; }
  // The share of the backward's time after which the block has added all it adds into the tied
  // block's gradient (BlockGrads::tied_grads_done): 1 where only its end says so. The emulated
  // accelerator and `plan --predict` split the backward there.
  virtual double tied_grads_done_share() const { return 1.0; }
  virtual bool is_loss_block() const { return false; }
  // False when backward never reads this block's own parameters (GPT-2's embedding: a scatter of
  // the output gradient), so ZeRO-3 need not gather them for its backward. A tied block's
  // parameters are still needed by the block tied to it.
  virtual bool backward_reads_params() const { return true; }
  // A lookup block (LookupRows) says what its backward adds where; other blocks nothing.
  virtual std::optional<LookupRows> lookup_rows() const { return std::nullopt; }

  // Elements of the output for a micro batch (B, T); the loss block's output is f32 (B*T).
  virtual std::size_t output_numel(int B, int T) const = 0;
  // The tensors a micro batch (B, T) keeps, for a context of device and compute dtype: a slot's
  // size may depend on the kernels they take (the GPU's flash attention keeps row statistics, not
  // the probabilities).
  virtual std::vector<ActivationSlot> saved_slots(int B, int T, Device device, DType dtype) const = 0;
  virtual std::vector<ActivationSlot> scratch_slots(int B, int T, Device device, DType dtype) const = 0;

  virtual void forward(ComputeContext& ctx, const BlockParams& p, const BlockIO& io) = 0;
  virtual void backward(ComputeContext& ctx, const BlockParams& p, const BlockGrads& g, const BlockIO& io) = 0;

  // Floating-point operations of forward + backward for a micro batch (see flops.h).
  virtual double flops(int B, int T) const = 0;
};

}  // namespace zt::models
