// The parameter layout of one block: ordered named tensors packed into one flat parameter.
//
// Blocks never own parameter storage. They declare where each named tensor lives inside a flat
// vector of param_count() elements; the caller (ModelState for single-process runs, the ZeRO
// engine otherwise) owns the flat parameter and gradient buffers and passes views in.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/buffer.h"

namespace zt::models {

// How a tensor is initialised (GPT-2 style: normal weights, zero biases, unit LayerNorm gains).
struct InitRule {
  enum class Kind { normal, zeros, ones };
  Kind kind = Kind::zeros;
  float std = 0.0f;  // for normal: N(0, std^2)

  static InitRule normal(float s) { return {Kind::normal, s}; }
  static InitRule zeros() { return {Kind::zeros, 0.0f}; }
  static InitRule ones() { return {Kind::ones, 0.0f}; }
};

struct ParamTensor {
  std::string name;
  std::vector<std::size_t> shape;
  std::size_t offset = 0;  // in elements from the start of the block's flat parameter
  std::size_t numel = 0;
  InitRule init;
  bool decay = true;  // matrices decay under AdamW; biases and LayerNorm gains do not (GPT-2 rule)
  bool embedding = false;  // a token or position embedding (optimizer.no_decay_embeddings exempts it)
};

class ParamLayout {
 public:
  // Appends a tensor after the previous one; returns its index.
  std::size_t add(std::string name, std::vector<std::size_t> shape, InitRule init, bool decay, bool embedding = false);

  const std::vector<ParamTensor>& tensors() const { return tensors_; }
  std::size_t numel() const { return numel_; }
  // Throws std::out_of_range naming the tensor when it does not exist.
  const ParamTensor& find(const std::string& name) const;
  // The named tensor's window into flat (a view of numel() elements).
  BufferView view(const BufferView& flat, std::size_t index) const;
  BufferView view(const BufferView& flat, const std::string& name) const;

 private:
  std::vector<ParamTensor> tensors_;
  std::size_t numel_ = 0;
};

}  // namespace zt::models
