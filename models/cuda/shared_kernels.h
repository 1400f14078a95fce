// Host entry points of the CUDA kernels that several ops use (elementwise.cu, attention.cu):
// plain pointers, a DType for the storage (f32, bf16 or f16; arithmetic in fp32) and the stream
// as cudaStream_t. Each op's own kernels are in its ops/<op>.cu. Only compiled with the CUDA
// backend.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace zt::models::cuda {

// f32 scratch elements the column sums of an (N, C) gradient need (partial sums per chunk of rows):
// bias_backward, and the weight gradients of LayerNorm and RMSNorm.
std::size_t column_sum_scratch_floats(int N, int C);

// out[n, o] += bias[o];  dbias[o] += sum_n dout[n, o]  (rows of stride ld)
void bias_forward(void* out, const void* bias, int N, int OC, int ld, DType dt, cudaStream_t s);
void bias_backward(void* dbias, const void* dout, float* scratch, int N, int OC, int ld, DType dt, cudaStream_t s);

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

}  // namespace zt::models::cuda
