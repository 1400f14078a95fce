#include "runtime/interop/hf_tensor_layout.h"

#include <algorithm>

namespace zt::interop {
namespace {

// A zerotrain tensor seen as (rows, cols): 1-D tensors are one column of rows.
struct Matrix {
  std::size_t rows, cols;
};

Matrix as_matrix(const models::ParamTensor& tensor) {
  const std::size_t rows = tensor.shape.front();
  return {rows, tensor.numel / rows};
}

std::size_t kept_rows(const models::HfTensorMapping& mapping, const models::ParamTensor& tensor) {
  return mapping.rows == 0 ? tensor.shape.front() : mapping.rows;
}

}  // namespace

std::vector<std::size_t> hf_shape(const models::HfTensorMapping& mapping, const models::ParamTensor& tensor) {
  std::vector<std::size_t> shape = tensor.shape;
  shape.front() = kept_rows(mapping, tensor);
  if (mapping.transpose) std::reverse(shape.begin(), shape.end());
  return shape;
}

std::vector<float> to_hf_layout(const models::HfTensorMapping& mapping, const models::ParamTensor& tensor,
                                std::span<const float> values) {
  const Matrix m = as_matrix(tensor);
  const std::size_t rows = kept_rows(mapping, tensor);
  std::vector<float> out(rows * m.cols);
  if (!mapping.transpose) {
    std::copy_n(values.begin(), out.size(), out.begin());  // (rows, cols), padding rows dropped
    return out;
  }
  for (std::size_t r = 0; r < rows; ++r)  // (rows, cols) -> (cols, rows)
    for (std::size_t c = 0; c < m.cols; ++c) out[c * rows + r] = values[r * m.cols + c];
  return out;
}

std::vector<float> from_hf_layout(const models::HfTensorMapping& mapping, const models::ParamTensor& tensor,
                                  std::span<const float> values) {
  const Matrix m = as_matrix(tensor);
  const std::size_t rows = kept_rows(mapping, tensor);
  std::vector<float> out(tensor.numel, 0.0f);
  if (!mapping.transpose) {
    std::copy_n(values.begin(), rows * m.cols, out.begin());
    return out;
  }
  for (std::size_t r = 0; r < rows; ++r)  // (cols, rows) -> (rows, cols)
    for (std::size_t c = 0; c < m.cols; ++c) out[r * m.cols + c] = values[c * rows + r];
  return out;
}

}  // namespace zt::interop
