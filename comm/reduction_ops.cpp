#include "comm/reduction_ops.h"

#include <stdexcept>

namespace zt {

MPI_Datatype mpi_datatype(DType dtype) {
  switch (dtype) {
    case DType::f32: return MPI_FLOAT;
    case DType::bf16: return MPI_UINT16_T;
    case DType::f16: return MPI_UINT16_T;
  }
  throw std::logic_error("mpi_datatype: unknown dtype");
}

void bf16_sum_function(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const bf16*>(in);
  auto* b = static_cast<bf16*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = float_to_bf16(bf16_to_float(a[i]) + bf16_to_float(b[i]));
}

void f16_sum_function(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const f16*>(in);
  auto* b = static_cast<f16*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = float_to_f16(f16_to_float(a[i]) + f16_to_float(b[i]));
}

// Rounded addition is commutative, so MPI may combine in any order of operands.
MpiSumOps::MpiSumOps() : bf16_sum_(bf16_sum_function, true), f16_sum_(f16_sum_function, true) {}

MPI_Op MpiSumOps::sum(DType dtype) const {
  switch (dtype) {
    case DType::f32: return MPI_SUM;
    case DType::bf16: return bf16_sum_.get();
    case DType::f16: return f16_sum_.get();
  }
  throw std::logic_error("MpiSumOps::sum: unknown dtype");
}

void divide_host(BufferView data, int divisor) {
  const float d = static_cast<float>(divisor);
  switch (data.dtype) {
    case DType::f32: {
      float* x = data.as<float>();
      for (std::size_t i = 0; i < data.numel; ++i) x[i] /= d;
      break;
    }
    case DType::bf16: {
      bf16* x = data.as<bf16>();
      for (std::size_t i = 0; i < data.numel; ++i) x[i] = float_to_bf16(bf16_to_float(x[i]) / d);
      break;
    }
    case DType::f16: {
      f16* x = data.as<f16>();
      for (std::size_t i = 0; i < data.numel; ++i) x[i] = float_to_f16(f16_to_float(x[i]) / d);
      break;
    }
  }
}

}  // namespace zt
