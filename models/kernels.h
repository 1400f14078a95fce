// The layer kernels of one device behind one interface: the CPU reference (models/layers/*, fp32)
// or the CUDA kernels (models/cuda/*, fp32, bf16 or f16 storage with fp32 accumulation). A
// ComputeContext owns the kernels of its device; ops.h checks the views and calls them, so no code
// above this line knows which device it runs on. Arguments, shapes and accumulate-vs-overwrite
// rules are those of ops.h.
#pragma once

#include <cstddef>

#include <span>

#include "core/buffer.h"
#include "models/layers/rmsnorm.h"

namespace zt::models {

namespace ops {
struct TokenIndex;
}

class Kernels {
 public:
  virtual ~Kernels() = default;

  virtual void embedding_forward(BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B, int T,
                                 int C) = 0;
  virtual void embedding_backward(BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                                  const ops::TokenIndex& index, int B, int T, int C) = 0;
  virtual void layernorm_forward(BufferView out, BufferView mean, BufferView rstd, BufferView inp, BufferView weight,
                                 BufferView bias, int N, int C) = 0;
  virtual void layernorm_backward(BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                                  BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N,
                                  int C) = 0;
  virtual void linear_forward(BufferView out, BufferView inp, BufferView weight, BufferView bias, int N, int IC,
                              int OC, int ldo) = 0;
  virtual void linear_backward(BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout, BufferView inp,
                               BufferView weight, int N, int IC, int OC, int ldo) = 0;
  virtual void residual_layernorm_forward(BufferView mid, BufferView out, BufferView mean, BufferView rstd,
                                          BufferView a, BufferView b, BufferView weight, BufferView bias, int N,
                                          int C) = 0;
  virtual void bias_gelu_forward(BufferView out, BufferView pre, BufferView bias, int N, int OC) = 0;
  virtual void gelu_bias_backward(BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                                  int OC) = 0;
  virtual void residual_forward(BufferView out, BufferView a, BufferView b) = 0;
  virtual void attention_forward(BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B, int T,
                                 int C, int NH) = 0;
  virtual void attention_backward(BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                                  BufferView scratch, int B, int T, int C, int NH) = 0;
  virtual void softmax_xent_forward(BufferView losses, BufferView logits, BufferView targets, int N, int V,
                                    int Vp) = 0;
  virtual void softmax_xent_backward(BufferView dlogits, BufferView logits, BufferView targets, float dloss, int N,
                                     int V, int Vp) = 0;
  // The Llama family's ops (llama_ops.h).
  virtual void token_embedding_forward(BufferView out, BufferView tokens, BufferView wte, int N, int C) = 0;
  virtual void token_embedding_backward(BufferView dwte, BufferView dout, BufferView tokens,
                                        const ops::TokenIndex& index, int N, int C) = 0;
  virtual void rmsnorm_forward(BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows, int C,
                               float eps, cpu::RowGroups groups) = 0;
  virtual void rmsnorm_backward(BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                                BufferView weight, BufferView rstd, int rows, int C, cpu::RowGroups groups,
                                bool accumulate) = 0;
  virtual void rope(BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
                    bool inverse) = 0;
  virtual void swiglu_forward(BufferView out, BufferView gu, int N, int I) = 0;
  virtual void swiglu_backward(BufferView dgu, BufferView dout, BufferView gu, int N, int I) = 0;
  virtual void gqa_attention_forward(BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B, int T,
                                     int NH, int KV, int hs) = 0;
  virtual void gqa_attention_backward(BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                                      BufferView scratch, int B, int T, int NH, int KV, int hs) = 0;

  // acc (one f64 in two f32 elements) += (f32)(sum(losses) / valid), the sum taken in f64 in a
  // fixed order; adds 0 when valid is 0. The batch's mean loss without a trip to the host.
  virtual void add_mean_loss(BufferView acc, BufferView losses, int valid) = 0;
};

}  // namespace zt::models
