// The CPU reference kernels (see kernels.h).
#pragma once

#include "models/kernels.h"

namespace zt::models {

class CpuKernels final : public Kernels {
 public:
  void embedding_forward(BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B, int T,
                                 int C) override;
  void embedding_backward(BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                                  const ops::TokenIndex& index, int B, int T, int C) override;
  void layernorm_forward(BufferView out, BufferView mean, BufferView rstd, BufferView inp, BufferView weight,
                                 BufferView bias, int N, int C) override;
  void layernorm_backward(BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                                  BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N,
                                  int C) override;
  void linear_forward(BufferView out, BufferView inp, BufferView weight, BufferView bias, int N, int IC,
                              int OC, int ldo) override;
  void linear_backward(BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout, BufferView inp,
                               BufferView weight, int N, int IC, int OC, int ldo) override;
  void residual_layernorm_forward(BufferView mid, BufferView out, BufferView mean, BufferView rstd, BufferView a,
                                  BufferView b, BufferView weight, BufferView bias, int N, int C) override;
  void bias_gelu_forward(BufferView out, BufferView pre, BufferView bias, int N, int OC) override;
  void gelu_bias_backward(BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N, int OC) override;
  void residual_forward(BufferView out, BufferView a, BufferView b) override;
  void attention_forward(BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B, int T,
                                 int C, int NH) override;
  void attention_backward(BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                                  BufferView scratch, int B, int T, int C, int NH) override;
  void softmax_xent_forward(BufferView losses, BufferView logits, BufferView targets, int N, int V,
                                    int Vp) override;
  void softmax_xent_backward(BufferView dlogits, BufferView logits, BufferView targets, float dloss, int N,
                                     int V, int Vp) override;
  void token_embedding_forward(BufferView out, BufferView tokens, BufferView wte, int N, int C) override;
  void token_embedding_backward(BufferView dwte, BufferView dout, BufferView tokens,
                                        const ops::TokenIndex& index, int N, int C) override;
  void rmsnorm_forward(BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows, int C,
                               float eps, cpu::RowGroups groups) override;
  void rmsnorm_backward(BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                                BufferView weight, BufferView rstd, int rows, int C, cpu::RowGroups groups,
                                bool accumulate) override;
  void rope(BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
                    bool inverse) override;
  void swiglu_forward(BufferView out, BufferView gu, int N, int I) override;
  void swiglu_backward(BufferView dgu, BufferView dout, BufferView gu, int N, int I) override;
  void gqa_attention_forward(BufferView out, BufferView att, BufferView qkv, BufferView scratch, int B, int T,
                                     int NH, int KV, int hs) override;
  void gqa_attention_backward(BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                                      BufferView scratch, int B, int T, int NH, int KV, int hs) override;

  void add_mean_loss(BufferView acc, BufferView losses, int valid) override;
};

}  // namespace zt::models
