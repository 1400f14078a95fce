// The CPU reference kernels behind models/kernels.h: fp32 only, on the calling thread (the CPU
// compute stream runs its work when it is enqueued).
#include "models/cpu_kernels.h"

#include <cstring>

#include "models/layers/attention.h"
#include "models/layers/embedding.h"
#include "models/layers/gelu.h"
#include "models/layers/layernorm.h"
#include "models/layers/linear.h"
#include "models/layers/residual.h"
#include "models/layers/softmax_xent.h"
#include "models/ops.h"

namespace zt::models {
namespace {

float* f(const BufferView& v) { return static_cast<float*>(v.data); }
float* or_null(const BufferView& v) { return v.numel > 0 ? f(v) : nullptr; }

}  // namespace

void CpuKernels::embedding_forward(BufferView out, BufferView tokens, BufferView wte, BufferView wpe, int B, int T,
                                   int C) {
  cpu::embedding_forward(f(out), ops::int32_view(tokens), f(wte), f(wpe), B, T, C);
}

void CpuKernels::embedding_backward(BufferView dwte, BufferView dwpe, BufferView dout, BufferView tokens,
                                    const ops::TokenIndex&, int B, int T, int C) {
  cpu::embedding_backward(f(dwte), f(dwpe), f(dout), ops::int32_view(tokens), B, T, C);
}

void CpuKernels::layernorm_forward(BufferView out, BufferView mean, BufferView rstd, BufferView inp, BufferView weight,
                                   BufferView bias, int N, int C) {
  cpu::layernorm_forward(f(out), f(mean), f(rstd), f(inp), f(weight), f(bias), N, C);
}

void CpuKernels::layernorm_backward(BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                                    BufferView inp, BufferView weight, BufferView mean, BufferView rstd, int N,
                                    int C) {
  cpu::layernorm_backward(f(dinp), f(dweight), f(dbias), f(dout), f(inp), f(weight), f(mean), f(rstd), N, C);
}

void CpuKernels::linear_forward(BufferView out, BufferView inp, BufferView weight, BufferView bias, int N, int IC,
                                int OC, int ldo) {
  cpu::linear_forward(f(out), f(inp), f(weight), or_null(bias), N, IC, OC, ldo);
}

void CpuKernels::linear_backward(BufferView dinp, BufferView dweight, BufferView dbias, BufferView dout,
                                 BufferView inp, BufferView weight, int N, int IC, int OC, int ldo) {
  cpu::linear_backward(or_null(dinp), f(dweight), or_null(dbias), f(dout), f(inp), f(weight), N, IC, OC, ldo);
}

void CpuKernels::residual_layernorm_forward(BufferView mid, BufferView out, BufferView mean, BufferView rstd,
                                            BufferView a, BufferView b, BufferView weight, BufferView bias, int N,
                                            int C) {
  cpu::residual_layernorm_forward(f(mid), f(out), f(mean), f(rstd), f(a), f(b), f(weight), f(bias), N, C);
}

void CpuKernels::bias_gelu_forward(BufferView out, BufferView pre, BufferView bias, int N, int OC) {
  cpu::bias_gelu_forward(f(out), f(pre), f(bias), N, OC);
}

void CpuKernels::gelu_bias_backward(BufferView dpre, BufferView dbias, BufferView pre, BufferView dout, int N,
                                    int OC) {
  cpu::gelu_bias_backward(f(dpre), f(dbias), f(pre), f(dout), N, OC);
}

void CpuKernels::residual_forward(BufferView out, BufferView a, BufferView b) {
  cpu::residual_forward(f(out), f(a), f(b), a.numel);
}

void CpuKernels::attention_forward(BufferView out, BufferView att, BufferView qkv, BufferView, int B, int T, int C,
                                   int NH) {
  cpu::attention_forward(f(out), f(att), f(qkv), B, T, C, NH);
}

void CpuKernels::attention_backward(BufferView dqkv, BufferView dout, BufferView qkv, BufferView att,
                                    BufferView scratch, int B, int T, int C, int NH) {
  cpu::attention_backward(f(dqkv), f(scratch), f(dout), f(qkv), f(att), B, T, C, NH);
}

void CpuKernels::softmax_xent_forward(BufferView losses, BufferView logits, BufferView targets, int N, int V, int Vp) {
  cpu::softmax_xent_forward(f(losses), f(logits), ops::int32_view(targets), N, V, Vp);
}

void CpuKernels::softmax_xent_backward(BufferView dlogits, BufferView logits, BufferView targets, float dloss, int N,
                                       int V, int Vp) {
  cpu::softmax_xent_backward(f(dlogits), f(logits), ops::int32_view(targets), dloss, N, V, Vp);
}

void CpuKernels::add_mean_loss(BufferView acc, BufferView losses, int valid) {
  double sum = 0.0;
  for (std::size_t i = 0; i < losses.numel; ++i) sum += f(losses)[i];
  const float mean = valid > 0 ? static_cast<float>(sum / valid) : 0.0f;
  double total = 0.0;
  std::memcpy(&total, acc.data, sizeof total);
  total += mean;
  std::memcpy(acc.data, &total, sizeof total);
}

}  // namespace zt::models
