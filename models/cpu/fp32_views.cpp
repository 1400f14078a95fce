#include "models/cpu/fp32_views.h"

#include <stdexcept>

namespace zt::models::cpu {
namespace {

// Widened copies live in blocks kept per thread and reused op after op: a fresh vector per view
// per op spent more time zero-filling new pages than converting (perf, bf16 GPT-2 on the CPU).
// A view takes the smallest spare block that holds it (else the largest, grown), so the blocks
// settle at the sizes of the views an op widens together rather than all growing to the largest.
std::vector<std::vector<float>>& spare_blocks() {
  thread_local std::vector<std::vector<float>> blocks;
  return blocks;
}

std::vector<float> take_spare_block(std::size_t numel) {
  std::vector<std::vector<float>>& spare = spare_blocks();
  if (spare.empty()) return {};
  auto best = spare.end(), largest = spare.begin();
  for (auto it = spare.begin(); it != spare.end(); ++it) {
    if (it->size() >= numel && (best == spare.end() || it->size() < best->size())) best = it;
    if (it->size() > largest->size()) largest = it;
  }
  auto chosen = best != spare.end() ? best : largest;
  std::vector<float> block = std::move(*chosen);
  spare.erase(chosen);
  return block;
}

}  // namespace

Fp32Views::~Fp32Views() {
  for (Copy& copy : copies_) spare_blocks().push_back(std::move(copy.values));
}

float* Fp32Views::values(const BufferView& view, bool written) {
  if (view.numel == 0) return nullptr;
  if (view.dtype == DType::f32) return static_cast<float*>(view.data);
  if (view.dtype == DType::i32) throw std::invalid_argument("Fp32Views: integer views are read as they are");
  for (Copy& copy : copies_)
    if (copy.view.data == view.data && copy.view.dtype == view.dtype) {
      if (view.numel > copy.view.numel) throw std::logic_error("Fp32Views: one buffer given as views of two sizes");
      copy.written = copy.written || written;
      return copy.values.data();
    }
  std::vector<float> block = take_spare_block(view.numel);
  if (block.size() < view.numel) block.resize(view.numel);
  Copy& copy = copies_.emplace_back(Copy{view, std::move(block), written});
  convert_host(view.data, view.dtype, copy.values.data(), DType::f32, view.numel);
  return copy.values.data();
}

void Fp32Views::store() {
  for (Copy& copy : copies_)
    if (copy.written) convert_host(copy.values.data(), DType::f32, copy.view.data, copy.view.dtype, copy.view.numel);
  for (Copy& copy : copies_) spare_blocks().push_back(std::move(copy.values));
  copies_.clear();
}

}  // namespace zt::models::cpu
