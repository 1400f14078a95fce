// Host entry points of the CUDA kernels (models/cuda/*.cu). Plain pointers, a DType for the
// storage of activations/parameters (f32, bf16 or f16; accumulation is always fp32) and the
// stream as cudaStream_t. Shapes and accumulate rules as in the CPU reference (models/layers/*).
// Only compiled with the CUDA backend; CudaKernels (cuda_kernels.cpp) is the caller.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace zt::models::cuda {

void embedding_forward(void* out, const std::int32_t* tokens, const void* wte, const void* wpe, int B, int T, int C,
                       DType dt, cudaStream_t s);
void embedding_backward(void* dwte, void* dwpe, const void* dout, const std::int32_t* positions,
                        const std::int32_t* starts, const std::int32_t* group_tokens, int groups, int B, int T, int C,
                        DType dt, cudaStream_t s);

// scratch: f32, layernorm_scratch_floats(N, C) elements (partial column sums for dweight, dbias).
std::size_t column_sum_scratch_floats(int N, int C);
void layernorm_forward(void* out, float* mean, float* rstd, const void* inp, const void* weight, const void* bias,
                       int N, int C, DType dt, cudaStream_t s);
void layernorm_backward(void* dinp, void* dweight, void* dbias, const void* dout, const void* inp, const void* weight,
                        const float* mean, const float* rstd, float* scratch, int N, int C, DType dt, cudaStream_t s);

// out[n, o] += bias[o];  dbias[o] += sum_n dout[n, o]  (rows of stride ld)
void bias_forward(void* out, const void* bias, int N, int OC, int ld, DType dt, cudaStream_t s);
void bias_backward(void* dbias, const void* dout, float* scratch, int N, int OC, int ld, DType dt, cudaStream_t s);

void gelu_forward(void* out, const void* inp, std::size_t n, DType dt, cudaStream_t s);
void gelu_backward(void* dinp, const void* inp, const void* dout, std::size_t n, DType dt, cudaStream_t s);
void residual_forward(void* out, const void* a, const void* b, std::size_t n, DType dt, cudaStream_t s);

// (B, T, 3, NH, hs) -> q, k, v each (B, NH, T, hs)  and its inverse (used for dq, dk, dv)
void split_heads(void* q, void* k, void* v, const void* qkv, int B, int T, int C, int NH, DType dt, cudaStream_t s);
void merge_heads(void* qkv, const void* q, const void* k, const void* v, int B, int T, int C, int NH, DType dt,
                 cudaStream_t s);
// (B, NH, T, hs) <-> (B, T, C)
void heads_to_rows(void* out, const void* y, int B, int T, int C, int NH, DType dt, cudaStream_t s);
void rows_to_heads(void* y, const void* inp, int B, int T, int C, int NH, DType dt, cudaStream_t s);
// In place on (rows, T, T): causal softmax of scaled scores; zero above the diagonal.
void causal_softmax_forward(void* att, int rows, int T, DType dt, cudaStream_t s);
// In place: datt <- att * (datt - rowsum(att * datt)), zero above the diagonal.
void causal_softmax_backward(void* datt, const void* att, int rows, int T, DType dt, cudaStream_t s);

void softmax_xent_forward(float* losses, const void* logits, const std::int32_t* targets, int N, int V, int Vp,
                          DType dt, cudaStream_t s);
void softmax_xent_backward(void* dlogits, const void* logits, const std::int32_t* targets, float dloss, int N, int V,
                           int Vp, DType dt, cudaStream_t s);

// acc += (f32)(sum of the n losses / valid), summed in f64 in a fixed order (one block).
void add_mean_loss(double* acc, const float* losses, std::size_t n, int valid, cudaStream_t s);

}  // namespace zt::models::cuda
