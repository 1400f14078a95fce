#include "models/param_layout.h"

#include <fmt/format.h>

#include <stdexcept>

namespace zt::models {

std::size_t ParamLayout::add(std::string name, std::vector<std::size_t> shape, InitRule init, bool decay,
                             bool embedding) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  tensors_.push_back({std::move(name), std::move(shape), numel_, n, init, decay, embedding});
  numel_ += n;
  return tensors_.size() - 1;
}

const ParamTensor& ParamLayout::find(const std::string& name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return t;
  throw std::out_of_range(fmt::format("no parameter tensor named '{}' in this block", name));
}

BufferView ParamLayout::view(const BufferView& flat, std::size_t index) const {
  if (flat.numel != numel_)
    throw std::invalid_argument(fmt::format("flat parameter has {} elements, the layout needs {}", flat.numel, numel_));
  const ParamTensor& t = tensors_.at(index);
  return flat.slice(t.offset, t.numel);
}

BufferView ParamLayout::view(const BufferView& flat, const std::string& name) const {
  const ParamTensor& t = find(name);
  return flat.slice(t.offset, t.numel);
}

}  // namespace zt::models
