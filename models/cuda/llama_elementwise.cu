// Llama-family CUDA kernels without reductions across rows: token embedding, RoPE, SwiGLU. Each
// mirrors its CPU reference in models/layers/*.
#include <cstring>
#include <stdexcept>

#include "models/cuda/llama_kernels.h"
#include "models/cuda/storage.cuh"

namespace zt::models::cuda {

namespace {

constexpr unsigned kThreads = 256;

// ---- token embedding ----

// tokens (N) -> out (N, C): one thread per output element.
template <typename S>
__global__ void token_embedding_forward_kernel(S* out, const std::int32_t* tokens, const S* wte, int C, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  out[i] = wte[static_cast<std::size_t>(tokens[i / C]) * C + i % C];
}

// dwte: one block per distinct token, threads over channels, summing that token's positions in
// ascending order (the host-built TokenIndex): deterministic without atomics.
template <typename S>
__global__ void token_embedding_backward_kernel(S* dwte, const S* dout, const std::int32_t* positions,
                                                const std::int32_t* starts, const std::int32_t* group_tokens, int C) {
  int g = blockIdx.x;
  std::size_t row = static_cast<std::size_t>(group_tokens[g]) * C;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    float acc = 0.0f;
    for (int k = starts[g]; k < starts[g + 1]; ++k) acc += load(dout + static_cast<std::size_t>(positions[k]) * C + c);
    store(dwte + row + c, load(dwte + row + c) + acc);
  }
}

template <typename S>
void launch_token_embedding_forward(void* out, const std::int32_t* tokens, const void* wte, int N, int C,
                                    cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(N) * C;
  token_embedding_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(out), tokens, static_cast<const S*>(wte), C, n);
}

template <typename S>
void launch_token_embedding_backward(void* dwte, const void* dout, const std::int32_t* positions,
                                     const std::int32_t* starts, const std::int32_t* group_tokens, int groups, int C,
                                     cudaStream_t s) {
  if (groups > 0)
    token_embedding_backward_kernel<S><<<groups, kThreads, 0, s>>>(static_cast<S*>(dwte), static_cast<const S*>(dout),
                                                                   positions, starts, group_tokens, C);
}

// ---- RoPE ----

struct RopeFreqs {
  float inv_freq[kMaxRopeHalf];
};

// One thread per (row, i < hs/2) pair, rotating channel i with i + hs/2 in each of the first
// `heads` heads of the row. The angle is rounded to fp32 before sincosf (accurate, not the
// intrinsic), as the CPU reference and transformers do.
template <typename S>
__global__ void rope_kernel(S* x, RopeFreqs freqs, int T, int heads, int hs, int ld, bool inverse, std::size_t n) {
  std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n) return;
  const int half = hs / 2;
  const int i = static_cast<int>(idx % half);
  const std::size_t row = idx / half;
  const float angle = static_cast<float>(row % T) * freqs.inv_freq[i];
  float sn, cs;
  sincosf(angle, &sn, &cs);
  if (inverse) sn = -sn;
  S* base = x + row * ld;
  for (int h = 0; h < heads; ++h) {
    S* v = base + static_cast<std::size_t>(h) * hs;
    const float a = load(v + i), b = load(v + i + half);
    store(v + i, a * cs - b * sn);
    store(v + i + half, b * cs + a * sn);
  }
}

template <typename S>
void launch_rope(void* x, const RopeFreqs& freqs, int B, int T, int heads, int hs, int ld, bool inverse,
                 cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(B) * T * (hs / 2);
  rope_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(x), freqs, T, heads, hs, ld, inverse,
                                                              n);
}

// ---- SwiGLU ----

template <typename S>
__global__ void swiglu_forward_kernel(S* out, const S* gu, int I, std::size_t n) {
  std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n) return;
  const std::size_t row = idx / I;
  const int i = static_cast<int>(idx % I);
  const float gate = load(gu + row * 2 * I + i), up = load(gu + row * 2 * I + I + i);
  const float sig = 1.0f / (1.0f + expf(-gate));
  store(out + idx, gate * sig * up);
}

template <typename S>
__global__ void swiglu_backward_kernel(S* dgu, const S* dout, const S* gu, int I, std::size_t n) {
  std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n) return;
  const std::size_t row = idx / I;
  const int i = static_cast<int>(idx % I);
  const float gate = load(gu + row * 2 * I + i), up = load(gu + row * 2 * I + I + i), d = load(dout + idx);
  const float sig = 1.0f / (1.0f + expf(-gate));
  store(dgu + row * 2 * I + i, d * up * sig * (1.0f + gate * (1.0f - sig)));
  store(dgu + row * 2 * I + I + i, d * gate * sig);
}

template <typename S> void launch_swiglu_forward(void* out, const void* gu, int N, int I, cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(N) * I;
  swiglu_forward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<S*>(out),
                                                                        static_cast<const S*>(gu), I, n);
}

template <typename S>
void launch_swiglu_backward(void* dgu, const void* dout, const void* gu, int N, int I, cudaStream_t s) {
  std::size_t n = static_cast<std::size_t>(N) * I;
  swiglu_backward_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, s>>>(
      static_cast<S*>(dgu), static_cast<const S*>(dout), static_cast<const S*>(gu), I, n);
}

}  // namespace

void token_embedding_forward(void* out, const std::int32_t* tokens, const void* wte, int N, int C, DType dt,
                             cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_token_embedding_forward, out, tokens, wte, N, C, s);
}

void token_embedding_backward(void* dwte, const void* dout, const std::int32_t* positions, const std::int32_t* starts,
                              const std::int32_t* group_tokens, int groups, int C, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_token_embedding_backward, dwte, dout, positions, starts, group_tokens, groups, C, s);
}

void rope(void* x, const float* inv_freq, int B, int T, int heads, int hs, int ld, bool inverse, DType dt,
          cudaStream_t s) {
  if (hs / 2 > kMaxRopeHalf) throw std::invalid_argument("rope: head size too large for the kernel");
  RopeFreqs freqs{};
  std::memcpy(freqs.inv_freq, inv_freq, sizeof(float) * (hs / 2));
  ZT_DISPATCH_STORAGE(dt, launch_rope, x, freqs, B, T, heads, hs, ld, inverse, s);
}

void swiglu_forward(void* out, const void* gu, int N, int I, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_swiglu_forward, out, gu, N, I, s);
}

void swiglu_backward(void* dgu, const void* dout, const void* gu, int N, int I, DType dt, cudaStream_t s) {
  ZT_DISPATCH_STORAGE(dt, launch_swiglu_backward, dgu, dout, gu, N, I, s);
}

}  // namespace zt::models::cuda
