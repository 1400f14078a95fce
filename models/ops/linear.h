// Linear layer y = x W^T + b (CPU reference, fp32, matrix products through OpenBLAS).
// W is stored (OC, IC) as in PyTorch's nn.Linear, so the tied LM head can reuse wte (V, C).
#pragma once

#include "models/ops/common.h"

namespace zt::models::cpu {

// inp (N, IC), weight (OC, IC), bias (OC) or null -> out (N, OC), row stride ldo >= OC
// (ldo > OC lets the LM head write a padded vocabulary).
void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int IC, int OC,
                    int ldo);
// dout (N, OC) with row stride ldo -> dinp (N, IC), dweight (OC, IC), dbias (OC).
// dweight and dbias accumulate (+=); dinp is overwritten.
// dinp may be null when the input needs no gradient, dweight when the caller computes it in
// another call (a tied weight's gradient first), dbias when there is no bias.
void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int IC, int OC, int ldo);

// Sets the number of threads of this process's CPU compute: OpenBLAS's (the element-wise kernels
// run on the calling thread, vectorised). Each rank of a CPU run should use its share of the cores so that ranks do not
// oversubscribe them (runtime/train/cpu_threads.h: cpu_threads_for_this_rank).
void set_compute_threads(int threads);
int blas_threads();  // OpenBLAS's thread count

}  // namespace zt::models::cpu

namespace zt::models::ops {

// On a context's views: bias, dbias, dinp and dweight may be empty views (numel 0) when absent or
// not needed; dinp is overwritten, dweight and dbias accumulate.
void linear_forward(ComputeContext& ctx, BufferView out, BufferView inp, BufferView weight, BufferView bias, int N,
                    int IC, int OC, int ldo);
void linear_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                     BufferView inp, BufferView weight, int N, int IC, int OC, int ldo);

// The op on a CUDA context (linear.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void linear_forward(ComputeContext& ctx, BufferView out, BufferView inp, BufferView weight, BufferView bias, int N,
                    int IC, int OC, int ldo);
void linear_backward(ComputeContext& ctx, BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                     BufferView inp, BufferView weight, int N, int IC, int OC, int ldo);
}  // namespace on_cuda

}  // namespace zt::models::ops
