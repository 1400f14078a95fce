// The CPU reference kernels of the Llama family's ops (see kernels.h, llama_ops.h).
#include "models/cpu_kernels.h"
#include "models/layers/gqa_attention.h"
#include "models/layers/rope.h"
#include "models/layers/swiglu.h"
#include "models/layers/token_embedding.h"
#include "models/ops.h"

namespace zt::models {
namespace {

float* f(const BufferView& v) { return static_cast<float*>(v.data); }

}  // namespace

void CpuKernels::token_embedding_forward(BufferView out, BufferView tokens, BufferView wte, int N, int C) {
  cpu::token_embedding_forward(f(out), ops::int32_view(tokens), f(wte), N, C);
}

void CpuKernels::token_embedding_backward(BufferView dwte, BufferView dout, BufferView tokens, const ops::TokenIndex&,
                                          int N, int C) {
  cpu::token_embedding_backward(f(dwte), f(dout), ops::int32_view(tokens), N, C);
}

void CpuKernels::rmsnorm_forward(BufferView out, BufferView rstd, BufferView inp, BufferView weight, int rows, int C,
                                 float eps, cpu::RowGroups groups) {
  cpu::rmsnorm_forward(f(out), f(rstd), f(inp), f(weight), rows, C, eps, groups);
}

void CpuKernels::rmsnorm_backward(BufferView dinp, BufferView dweight, BufferView dout, BufferView inp,
                                  BufferView weight, BufferView rstd, int rows, int C, cpu::RowGroups groups,
                                  bool accumulate) {
  cpu::rmsnorm_backward(f(dinp), f(dweight), f(dout), f(inp), f(weight), f(rstd), rows, C, groups, accumulate);
}

void CpuKernels::rope(BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
                      bool inverse) {
  cpu::rope_forward(f(x), inv_freq.data(), B, T, heads, hs, ld, inverse);
}

void CpuKernels::swiglu_forward(BufferView out, BufferView gu, int N, int I) { cpu::swiglu_forward(f(out), f(gu), N, I); }

void CpuKernels::swiglu_backward(BufferView dgu, BufferView dout, BufferView gu, int N, int I) {
  cpu::swiglu_backward(f(dgu), f(dout), f(gu), N, I);
}

void CpuKernels::gqa_attention_forward(BufferView out, BufferView att, BufferView qkv, BufferView, int B, int T, int NH,
                                       int KV, int hs) {
  cpu::gqa_attention_forward(f(out), f(att), f(qkv), B, T, NH, KV, hs);
}

void CpuKernels::gqa_attention_backward(BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                                        BufferView scratch, int B, int T, int NH, int KV, int hs) {
  cpu::gqa_attention_backward(f(dqkv), f(scratch), f(dout), f(qkv), f(att), B, T, NH, KV, hs);
}

}  // namespace zt::models
