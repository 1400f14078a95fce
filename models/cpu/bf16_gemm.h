// Matrix products on bf16 storage without widening it first: oneDNN's matmul reads the bf16
// operands as they are, multiplies them exactly (a bf16 x bf16 product fits in fp32), accumulates
// in fp32 and writes fp32, with the AVX512-BF16 or AMX instructions. That is the CUDA kernels'
// contract, at about twice the rate of OpenBLAS's sgemm on the widened operands (bench/README.md).
//
// Only where the CPU has those instructions: elsewhere oneDNN would convert the operands itself
// (or run its reference loops), and widening once and calling sgemm is as fast or faster. So
// bf16_gemm_native() says whether this process takes this path; the choice is logged once at
// debug level.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::models::cpu {

// Whether bf16 products run natively on this CPU (and train.cpu_reference_kernels is off).
bool bf16_gemm_native();

// C (M, N) = op(A) (M, K) x op(B) (K, N), or C += that with accumulate. Row-major with leading
// dimensions lda, ldb, ldc; op(X) = X^T where trans_x (X then stored (K, M) or (N, K)). Runs on
// `threads` threads. Call only when bf16_gemm_native().
void bf16_gemm(bool trans_a, bool trans_b, int M, int N, int K, const bf16* A, int lda, const bf16* B, int ldb,
               float* C, int ldc, bool accumulate, int threads);

}  // namespace zt::models::cpu
