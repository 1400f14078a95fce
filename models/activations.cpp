#include "models/activations.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "core/device_ops.h"

namespace zt::models {

namespace {
// Every slot starts on a 256-byte boundary: what cuBLAS and vectorised kernels like.
constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

struct Activations::Plan {
  std::size_t bytes = 0;
  Slot input, targets, index_positions, index_starts, index_tokens;
  std::vector<Slot> outputs;
  std::vector<std::vector<Slot>> saved, scratch;
  Slot grad_stream[2];
  std::vector<bool> recomputed;

  Slot take(std::size_t numel, DType dtype) {
    Slot s{bytes, numel, dtype};
    bytes += align_up(numel * dtype_size(dtype));
    return s;
  }
};

std::vector<bool> Activations::recomputed_blocks(const Model& model, int recompute_every) {
  if (recompute_every < 0) throw std::invalid_argument("activation checkpointing: recompute_every must not be negative");
  std::vector<bool> recomputed(model.num_blocks(), false);
  if (recompute_every == 0) return recomputed;
  int candidate = 0;
  for (std::size_t i = 0; i < model.num_blocks(); ++i) {
    const Block& b = model.block(i);
    if (b.is_loss_block() || !b.backward_reads_params()) continue;
    recomputed[i] = candidate++ % recompute_every == 0;
  }
  return recomputed;
}

Activations::Plan Activations::make_plan(const Model& model, int B, int T, Device device, DType dtype,
                                         int recompute_every) {
  if (B <= 0 || T <= 0 || T > model.max_seq_len())
    throw std::invalid_argument(fmt::format("micro batch ({}, {}) is invalid for {} (T must be in 1..{})", B, T,
                                            model.name(), model.max_seq_len()));
  Plan p;
  p.recomputed = recomputed_blocks(model, recompute_every);
  const std::vector<bool>& recomputed = p.recomputed;
  const bool sharing = std::find(recomputed.begin(), recomputed.end(), true) != recomputed.end();
  std::size_t BT = static_cast<std::size_t>(B) * T;
  if (model.input_kind() == Model::InputKind::tokens) {
    p.input = p.take(BT, DType::i32);
    p.index_positions = p.take(BT, DType::i32);
    p.index_starts = p.take(BT + 1, DType::i32);
    p.index_tokens = p.take(BT, DType::i32);
  } else {
    p.input = p.take(BT * model.input_width(), dtype);
  }
  p.targets = p.take(BT, DType::i32);
  std::size_t max_stream = 0;
  for (std::size_t i = 0; i < model.num_blocks(); ++i) {
    const Block& b = model.block(i);
    bool loss = b.is_loss_block();
    p.outputs.push_back(p.take(b.output_numel(B, T), loss ? DType::f32 : dtype));
    if (!loss) max_stream = std::max(max_stream, b.output_numel(B, T));
    std::vector<Slot> saved;
    if (!recomputed[i] && !(sharing && loss))
      for (const ActivationSlot& s : b.saved_slots(B, T, device, dtype))
        saved.push_back(p.take(s.numel, s.f32 ? DType::f32 : dtype));
    p.saved.push_back(std::move(saved));
  }
  for (int k = 0; k < 2; ++k) p.grad_stream[k] = p.take(max_stream, dtype);
  // The recomputed blocks' saved tensors: every such block's slots start at the same base. The loss
  // block's join them: its forward is the last and its backward the first, so its saved tensors
  // (GPT-2's logits, the largest of all) are written after every forward that writes the region and
  // dead before the first recompute refills it.
  std::size_t base = p.bytes, top = p.bytes;
  for (std::size_t i = 0; i < model.num_blocks(); ++i) {
    if (!recomputed[i] && !(sharing && model.block(i).is_loss_block())) continue;
    p.bytes = base;
    for (const ActivationSlot& s : model.block(i).saved_slots(B, T, device, dtype))
      p.saved[i].push_back(p.take(s.numel, s.f32 ? DType::f32 : dtype));
    top = std::max(top, p.bytes);
  }
  p.bytes = top;
  // Scratch: every block's slots start at the same base.
  base = p.bytes, top = p.bytes;
  for (std::size_t i = 0; i < model.num_blocks(); ++i) {
    p.bytes = base;
    std::vector<Slot> scratch;
    for (const ActivationSlot& s : model.block(i).scratch_slots(B, T, device, dtype))
      scratch.push_back(p.take(s.numel, s.f32 ? DType::f32 : dtype));
    p.scratch.push_back(std::move(scratch));
    top = std::max(top, p.bytes);
  }
  p.bytes = top;
  return p;
}

std::size_t Activations::bytes_needed(const Model& model, int B, int T, Device device, DType dtype,
                                      int recompute_every) {
  return make_plan(model, B, T, device, dtype, recompute_every).bytes;
}

Activations::Activations(const Model& model, int B, int T, Device device, DType dtype, MemoryTracker& tracker,
                         int recompute_every)
    : model_(&model), B_(B), T_(T), device_(device), dtype_(dtype) {
  Plan p = make_plan(model, B, T, device, dtype, recompute_every);
  recomputed_ = std::move(p.recomputed);
  arena_ = Buffer(device, DType::f32, p.bytes / 4, MemCategory::activations, tracker);
  input_ = p.input, targets_ = p.targets;
  index_positions_ = p.index_positions, index_starts_ = p.index_starts, index_tokens_ = p.index_tokens;
  outputs_ = std::move(p.outputs);
  saved_ = std::move(p.saved);
  scratch_ = std::move(p.scratch);
  grad_stream_[0] = p.grad_stream[0], grad_stream_[1] = p.grad_stream[1];
  if (device.is_cuda()) {
    // One micro batch: input, targets and the token index, each slot-aligned as upload() packs them.
    std::size_t bytes = 0;
    for (const Slot* slot : {&input_, &targets_, &index_positions_, &index_starts_, &index_tokens_})
      bytes += align_up(slot->numel * dtype_size(slot->dtype));
    for (Buffer& staging : staging_)
      staging = Buffer::host(DType::f32, bytes / 4, MemCategory::comm_staging, Buffer::HostMemory::pinned, tracker);
  }
}

BufferView Activations::view(const Slot& s) const {
  return {static_cast<std::byte*>(arena_.data()) + s.offset, s.numel, s.dtype, device_};
}

void Activations::upload(const Slot& s, const void* host, std::size_t bytes) {
  if (device_.is_cpu()) {
    std::memcpy(static_cast<std::byte*>(arena_.data()) + s.offset, host, bytes);
    return;
  }
  if (staged_.empty()) {
    // This staging buffer was last sent two batches ago; its copy has long finished, but the host
    // must not write into it before it has.
    staging_free_[staging_turn_].synchronize();
    staged_bytes_ = 0;
  }
  Buffer& staging = staging_[staging_turn_];
  if (staged_bytes_ + bytes > staging.bytes()) throw std::logic_error("activations: a batch outgrew its staging buffer");
  std::memcpy(static_cast<std::byte*>(staging.data()) + staged_bytes_, host, bytes);
  Slot part = s;
  part.numel = bytes / dtype_size(s.dtype);
  staged_.push_back({part, staged_bytes_});
  staged_bytes_ += align_up(bytes);
}

void Activations::flush_uploads() {
  if (staged_.empty()) return;
  if (!stream_) throw std::logic_error("activations on a GPU need set_stream() before a batch is loaded");
  Buffer& staging = staging_[staging_turn_];
  for (const auto& [slot, offset] : staged_) {
    BufferView from{static_cast<std::byte*>(staging.data()) + offset, slot.numel, slot.dtype, Device::cpu()};
    copy_async(view(slot), from, *stream_);
  }
  staging_free_[staging_turn_] = stream_->record();
  staging_turn_ = 1 - staging_turn_;
  staged_.clear();
}

void TokenBatch::build_index() {
  const std::size_t n = tokens.size();
  valid_targets = static_cast<int>(std::count_if(targets.begin(), targets.end(), [](std::int32_t t) { return t >= 0; }));
  // Group positions by token (stable, so each group is in ascending position order).
  positions.resize(n);
  std::iota(positions.begin(), positions.end(), 0);
  std::stable_sort(positions.begin(), positions.end(),
                   [&](std::int32_t a, std::int32_t b) { return tokens[a] < tokens[b]; });
  starts.clear();
  ids.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (i == 0 || tokens[positions[i]] != tokens[positions[i - 1]]) {
      starts.push_back(static_cast<std::int32_t>(i));
      ids.push_back(tokens[positions[i]]);
    }
  starts.push_back(static_cast<std::int32_t>(n));
}

void Activations::set_tokens(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets) {
  TokenBatch batch{{tokens.begin(), tokens.end()}, {targets.begin(), targets.end()}, {}, {}, {}, 0};
  batch.build_index();
  set_tokens(batch);
}

void Activations::set_tokens(const TokenBatch& batch) {
  std::size_t BT = static_cast<std::size_t>(B_) * T_;
  if (model_->input_kind() != Model::InputKind::tokens) throw std::invalid_argument("this model takes features, not tokens");
  if (batch.tokens.size() != BT || batch.targets.size() != BT)
    throw std::invalid_argument(fmt::format("a micro batch of ({}, {}) needs {} tokens and targets, got {} and {}", B_,
                                            T_, BT, batch.tokens.size(), batch.targets.size()));
  if (batch.positions.size() != BT || batch.starts.size() != batch.ids.size() + 1)
    throw std::invalid_argument("a token batch without its index (TokenBatch::build_index)");
  upload(input_, batch.tokens.data(), BT * 4);
  upload(targets_, batch.targets.data(), BT * 4);
  valid_targets_ = batch.valid_targets;
  index_groups_ = static_cast<int>(batch.ids.size());
  upload(index_positions_, batch.positions.data(), BT * 4);
  upload(index_starts_, batch.starts.data(), batch.starts.size() * 4);
  upload(index_tokens_, batch.ids.data(), batch.ids.size() * 4);
  flush_uploads();
  token_index_ = {view(index_positions_), view(index_starts_), view(index_tokens_), index_groups_};
}

void Activations::set_features(std::span<const float> features, std::span<const std::int32_t> targets) {
  std::size_t BT = static_cast<std::size_t>(B_) * T_;
  std::size_t width = static_cast<std::size_t>(model_->input_width());
  if (model_->input_kind() != Model::InputKind::features) throw std::invalid_argument("this model takes tokens, not features");
  if (features.size() != BT * width || targets.size() != BT)
    throw std::invalid_argument(fmt::format("a micro batch of {} rows needs {} features and {} targets, got {} and {}",
                                            BT, BT * width, BT, features.size(), targets.size()));
  std::vector<std::byte> converted(BT * width * dtype_size(dtype_));
  convert_host(features.data(), DType::f32, converted.data(), dtype_, BT * width);
  upload(input_, converted.data(), converted.size());
  upload(targets_, targets.data(), BT * 4);
  flush_uploads();
  valid_targets_ = static_cast<int>(std::count_if(targets.begin(), targets.end(), [](std::int32_t t) { return t >= 0; }));
}

BufferView Activations::output(std::size_t block) const { return view(outputs_.at(block)); }

BufferView Activations::d_output(std::size_t block) const {
  if (model_->block(block).is_loss_block()) return {};
  BufferView v = view(grad_stream_[block % 2]);
  v.numel = model_->block(block).output_numel(B_, T_);
  return v;
}

BufferView Activations::d_input(std::size_t block) const {
  if (block == 0) return {};
  return d_output(block - 1);
}

BlockIO Activations::io(std::size_t block) const {
  BlockIO io;
  io.B = B_, io.T = T_;
  io.input = block == 0 ? view(input_) : output(block - 1);
  io.output = output(block);
  for (const Slot& s : saved_.at(block)) io.saved.push_back(view(s));
  for (const Slot& s : scratch_.at(block)) io.scratch.push_back(view(s));
  io.targets = view(targets_);
  io.token_index = &token_index_;
  if (loss_scale_in_forward_) io.dloss_in_forward = loss_dloss(*loss_scale_in_forward_, valid_targets_);
  return io;
}

double Activations::loss_sum() const {
  const BufferView on_device = losses();
  std::vector<float> host(on_device.numel);
  if (device_.is_cpu()) {
    std::memcpy(host.data(), on_device.data, on_device.bytes());
  } else {
    if (!stream_) throw std::logic_error("activations on a GPU need set_stream() before losses are read");
    copy_async({host.data(), host.size(), DType::f32, Device::cpu()}, on_device, *stream_);
    stream_->synchronize();
  }
  double sum = 0.0;
  for (float l : host) sum += l;
  return sum;
}

float Activations::mean_loss() const {
  return valid_targets_ > 0 ? static_cast<float>(loss_sum() / valid_targets_) : 0.0f;
}

}  // namespace zt::models
