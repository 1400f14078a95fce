#include "comm/reduction_ops.h"

#include <bit>
#include <cstdint>
#include <stdexcept>

namespace zt {

namespace {

// The bf16 sum runs over whole gradient buckets, so its conversions are inlined here; they are the
// same round-to-nearest-even (NaN kept quiet) as zt::float_to_bf16 in the core, and a test checks
// them against it (ReductionOps.Bf16SumMatchesCoreConversions).
inline float bf16_bits_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

inline std::uint16_t float_to_bf16_bits(float value) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace

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
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = float_to_bf16_bits(bf16_bits_to_float(a[i]) + bf16_bits_to_float(b[i]));
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
    case DType::i32: return MPI_SUM;
  }
  throw std::logic_error("MpiSumOps::sum: unknown dtype");
}

void divide_host(BufferView data, int divisor) {
  if (divisor == 1) return;  // x / 1 == x in every format: a single rank's average is a pass saved
  const float d = static_cast<float>(divisor);
  switch (data.dtype) {
    case DType::f32: {
      float* x = data.as<float>();
      for (std::size_t i = 0; i < data.numel; ++i) x[i] /= d;
      break;
    }
    case DType::bf16: {
      auto* x = static_cast<std::uint16_t*>(data.data);
      for (std::size_t i = 0; i < data.numel; ++i) x[i] = float_to_bf16_bits(bf16_bits_to_float(x[i]) / d);
      break;
    }
    case DType::f16: {
      f16* x = data.as<f16>();
      for (std::size_t i = 0; i < data.numel; ++i) x[i] = float_to_f16(f16_to_float(x[i]) / d);
      break;
    }
    case DType::i32: throw std::invalid_argument("an average of integers (i32) is not an integer");
  }
}

}  // namespace zt
