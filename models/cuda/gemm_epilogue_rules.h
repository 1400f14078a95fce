// When a product runs with a cuBLASLt epilogue (models/cuda/gemm.h), in plain C++ so that the
// CPU tests check it on machines without a GPU.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "core/dtype.h"

namespace zt::models::cuda {

// 16-bit storage (fp32 runs keep the separate kernels, whose results the fp32 CPU reference
// matches to 1e-4), every pointer 16-byte aligned and every leading dimension a multiple of 8
// elements: what cuBLASLt asks of the bias and GELU epilogues' vectors and auxiliary matrix.
inline bool gemm_epilogue_applies(DType dt, std::initializer_list<const void*> pointers,
                                  std::initializer_list<std::int64_t> leading_dims) {
  if (dt != DType::bf16 && dt != DType::f16) return false;
  for (const void* p : pointers)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  for (std::int64_t ld : leading_dims)
    if (ld <= 0 || ld % 8 != 0) return false;
  return true;
}

}  // namespace zt::models::cuda
