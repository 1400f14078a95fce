// ZT_CUDA_CHECK, ZT_CUBLAS_CHECK: throw zt::CallError with the library's error text when a call
// fails. Only for translation units built with the CUDA backend. (NCCL's lives in comm/.)
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/error.h"

namespace zt::detail {
inline void check_cuda(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess)
    throw_call_error("CUDA", call, file, line, std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code));
}
inline void check_cublas(cublasStatus_t code, const char* call, const char* file, int line) {
  if (code != CUBLAS_STATUS_SUCCESS)
    throw_call_error("cuBLAS", call, file, line, std::string(cublasGetStatusName(code)) + ": " + cublasGetStatusString(code));
}
}  // namespace zt::detail

#define ZT_CUDA_CHECK(call) ::zt::detail::check_cuda((call), #call, __FILE__, __LINE__)
#define ZT_CUBLAS_CHECK(call) ::zt::detail::check_cublas((call), #call, __FILE__, __LINE__)
