// One tensor between zerotrain's layout and Hugging Face's (see models/hf_tensor_map.h): the
// kept rows (padding dropped) and the transpose of Conv1D-style weights.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "models/hf_tensor_map.h"
#include "models/param_layout.h"

namespace zt::interop {

// The tensor's shape in the Hugging Face checkpoint.
std::vector<std::size_t> hf_shape(const models::HfTensorMapping& mapping, const models::ParamTensor& tensor);
// zerotrain values (tensor.numel) -> Hugging Face values (the product of hf_shape).
std::vector<float> to_hf_layout(const models::HfTensorMapping& mapping, const models::ParamTensor& tensor,
                                std::span<const float> values);
// Hugging Face values -> zerotrain values (tensor.numel; padding rows are zero).
std::vector<float> from_hf_layout(const models::HfTensorMapping& mapping, const models::ParamTensor& tensor,
                                  std::span<const float> values);

}  // namespace zt::interop
