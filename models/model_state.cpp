#include "models/model_state.h"

#include <cstring>
#include <stdexcept>

#include "core/device_ops.h"
#include "models/device_time.h"
#include "models/init.h"

namespace zt::models {

namespace {
// Whole-buffer copies between the host and the state's device, outside any training step.
void copy_to(BufferView dst, const void* src, std::size_t bytes) {
  copy_now(dst, {const_cast<void*>(src), bytes / dtype_size(dst.dtype), dst.dtype, Device::cpu()});
}
void copy_from(void* dst, BufferView src) { copy_now({dst, src.numel, src.dtype, Device::cpu()}, src); }
std::vector<float> gather_f32(const std::vector<Buffer>& buffers) {
  std::vector<float> out;
  for (const Buffer& b : buffers) {
    std::vector<std::byte> raw(b.bytes());
    copy_from(raw.data(), b.view());
    std::size_t at = out.size();
    out.resize(at + b.numel());
    convert_host(raw.data(), b.dtype(), out.data() + at, DType::f32, b.numel());
  }
  return out;
}
}  // namespace

ModelState::ModelState(const Model& model, Device device, DType dtype, MemoryTracker& tracker)
    : model_(&model), device_(device), dtype_(dtype) {
  for (std::size_t i = 0; i < model.num_blocks(); ++i) {
    std::size_t n = model.block(i).param_count();
    params_.emplace_back(device, dtype, n, MemCategory::params, tracker);
    grads_.emplace_back(device, dtype, n, MemCategory::grads, tracker);
  }
}

BlockParams ModelState::block_params(std::size_t block) const {
  BlockParams p{params(block), {}};
  if (auto tied = model_->block(block).tied_block()) p.tied_params = params(*tied);
  return p;
}

void ModelState::init(std::uint64_t seed) {
  for (std::size_t i = 0; i < params_.size(); ++i) {
    std::vector<float> host(params_[i].numel());
    init_block_params(model_->block(i).layout(), seed, i, host.data());
    std::vector<std::byte> raw(params_[i].bytes());
    convert_host(host.data(), DType::f32, raw.data(), dtype_, host.size());
    copy_to(params_[i].view(), raw.data(), raw.size());
  }
}

std::vector<float> ModelState::params_f32() const { return gather_f32(params_); }
std::vector<float> ModelState::grads_f32() const { return gather_f32(grads_); }

void ModelState::set_params_f32(const std::vector<float>& flat) {
  std::size_t total = 0;
  for (const Buffer& b : params_) total += b.numel();
  if (flat.size() != total) throw std::invalid_argument("set_params_f32: wrong number of parameters");
  std::size_t at = 0;
  for (Buffer& b : params_) {
    std::vector<std::byte> raw(b.bytes());
    convert_host(flat.data() + at, DType::f32, raw.data(), dtype_, b.numel());
    copy_to(b.view(), raw.data(), raw.size());
    at += b.numel();
  }
}

void ModelState::zero_grad(ComputeContext& ctx) {
  for (Buffer& g : grads_) ops::fill_zero(ctx, g.view());
}

namespace {
// The emulated device's block: the compute stream is the caller (inline), so waiting here is the
// stream being busy. Backward is split where the block's tied gradient is complete.
void occupy(const DeviceRates& rates, const Block& block, const Activations& acts, DType dtype, bool backward,
            const std::function<void()>& tied_grads_done = {}) {
  const BlockTime time = block_time(block, acts.B(), acts.T(), dtype, rates);
  if (!backward) return occupy_device(time.forward_s);
  const double share = block.tied_grads_done_share();
  occupy_device(share * time.backward_s);
  if (tied_grads_done) tied_grads_done();
  occupy_device((1.0 - share) * time.backward_s);
}
}  // namespace

void forward_block(ComputeContext& ctx, const Model& model, std::size_t i, const BlockParams& p, Activations& acts) {
  if (const DeviceRates* rates = ctx.emulation()) return occupy(*rates, model.block(i), acts, ctx.dtype(), false);
  model.block(i).forward(ctx, p, acts.io(i));
}

void backward_block(ComputeContext& ctx, const Model& model, std::size_t i, const BlockParams& p, BufferView grads,
                    BufferView tied_grads, Activations& acts, float loss_scale,
                    const std::function<void()>& tied_grads_done) {
  if (const DeviceRates* rates = ctx.emulation())
    return occupy(*rates, model.block(i), acts, ctx.dtype(), true, tied_grads_done);
  bool done = false;
  BlockGrads g;
  if (tied_grads_done)
    g.tied_grads_done = [&] {
      if (done) throw std::logic_error(model.block(i).name() + ": backward reported its tied gradient done twice");
      done = true;
      tied_grads_done();
    };
  g.grads = grads;
  g.tied_grads = tied_grads;
  g.d_output = acts.d_output(i);
  g.d_input = acts.d_input(i);
  g.dloss = loss_dloss(loss_scale, acts.valid_targets());
  model.block(i).backward(ctx, p, g, acts.io(i));
  if (tied_grads_done && !done) tied_grads_done();  // a block that adds to it until its end
}

float forward(ComputeContext& ctx, const Model& model, const ModelState& state, Activations& acts) {
  for (std::size_t i = 0; i < model.num_blocks(); ++i) forward_block(ctx, model, i, state.block_params(i), acts);
  ctx.synchronize();
  return acts.mean_loss();
}

void backward(ComputeContext& ctx, const Model& model, ModelState& state, Activations& acts, float loss_scale) {
  for (std::size_t i = model.num_blocks(); i-- > 0;) {
    BufferView tied_grads;
    if (auto tied = model.block(i).tied_block()) tied_grads = state.grads(*tied);
    backward_block(ctx, model, i, state.block_params(i), state.grads(i), tied_grads, acts, loss_scale);
  }
}

}  // namespace zt::models
