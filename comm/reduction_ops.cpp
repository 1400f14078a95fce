#include "comm/reduction_ops.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "core/host_arith.h"

namespace zt {

MPI_Datatype mpi_datatype(DType dtype) {
  switch (dtype) {
    case DType::f32: return MPI_FLOAT;
    case DType::bf16: return MPI_UINT16_T;
    case DType::f16: return MPI_UINT16_T;
    case DType::i32: return MPI_INT32_T;
  }
  throw std::logic_error("mpi_datatype: unknown dtype");
}

void bf16_sum_function(void* in, void* inout, int* length, MPI_Datatype*) {
  add_rounded_16bit(static_cast<std::uint16_t*>(inout), static_cast<const std::uint16_t*>(in),
                    DType::bf16, static_cast<std::size_t>(*length));
}

void f16_sum_function(void* in, void* inout, int* length, MPI_Datatype*) {
  add_rounded_16bit(static_cast<std::uint16_t*>(inout), static_cast<const std::uint16_t*>(in),
                    DType::f16, static_cast<std::size_t>(*length));
}

// Rounded addition is commutative, so MPI may combine in any order of operands.
MpiSumOps::MpiSumOps() : bf16_sum_(bf16_sum_function, true), f16_sum_(f16_sum_function, true) {}

MPI_Op MpiSumOps::sum(DType dtype) const {
  switch (dtype) {
    case DType::f32: return MPI_SUM;
    case DType::bf16: return bf16_sum_.get();
    case DType::f16: return f16_sum_.get();
    case DType::i32: return MPI_SUM;
  }
  throw std::logic_error("MpiSumOps::sum: unknown dtype");
}

void divide_host(BufferView data, int divisor) {
  if (divisor == 1) return;  // x / 1 == x in every format: a single rank's average is a pass saved
  const float d = static_cast<float>(divisor);
  switch (data.dtype) {
    case DType::f32: {
      divide_by(data.as<float>(), d, data.numel);
      break;
    }
    case DType::bf16:
    case DType::f16: {  // widened a chunk at a time, divided, rounded once
      constexpr std::size_t kChunk = 1024;
      float values[kChunk];
      auto* x = static_cast<std::uint16_t*>(data.data);
      for (std::size_t at = 0; at < data.numel; at += kChunk) {
        const std::size_t n = std::min(kChunk, data.numel - at);
        convert_host(x + at, data.dtype, values, DType::f32, n);
        divide_by(values, d, n);
        convert_host(values, DType::f32, x + at, data.dtype, n);
      }
      break;
    }
    case DType::i32: throw std::invalid_argument("an average of integers (i32) is not an integer");
  }
}

}  // namespace zt
