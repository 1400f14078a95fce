#include "models/cpu/fp32_views.h"

#include <stdexcept>

namespace zt::models::cpu {

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
  Copy& copy = copies_.emplace_back(Copy{view, std::vector<float>(view.numel), written});
  convert_host(view.data, view.dtype, copy.values.data(), DType::f32, view.numel);
  return copy.values.data();
}

void Fp32Views::store() {
  for (Copy& copy : copies_)
    if (copy.written) convert_host(copy.values.data(), DType::f32, copy.view.data, copy.view.dtype, copy.view.numel);
  copies_.clear();
}

}  // namespace zt::models::cpu
