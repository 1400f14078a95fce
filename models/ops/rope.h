// Rotary position embeddings (CPU reference, fp32) in Hugging Face's "rotate_half" layout: a head
// vector of hs channels is two halves, and channel i < hs/2 is rotated together with channel
// i + hs/2 by the angle t * inv_freq[i] (t = the position in the sequence):
//   out[i]        = x[i] cos - x[i + hs/2] sin
//   out[i + hs/2] = x[i + hs/2] cos + x[i] sin
// This is the layout of transformers' LlamaForCausalLM, so Hugging Face q_proj/k_proj weights load
// unchanged. Meta's original checkpoints rotate interleaved pairs (2i, 2i+1) instead; their
// q/k weights map to this layout by permuting the rows of each head (transformers'
// convert_llama_weights_to_hf.py does exactly that).
#pragma once

#include <span>
#include <vector>

#include "models/ops/common.h"

namespace zt::models::cpu {

// Llama 3's frequency scaling (transformers' rope_type "llama3"); factor 0 = none.
struct RopeScaling {
  float factor = 0.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int original_max_position = 8192;
};

// inv_freq[i] = theta^(-2i/hs), i < hs/2, rescaled by Llama 3's rule when scaling.factor > 0:
// wavelengths longer than original_max_position / low_freq_factor are divided by `factor`,
// shorter than original_max_position / high_freq_factor are kept, and those in between are
// interpolated smoothly. Rounded to fp32 as transformers does.
std::vector<float> rope_inv_freq(int hs, double theta, const RopeScaling& scaling = {});

// In place on the first `heads` head vectors (hs channels each) of every row of x (B*T rows of
// stride ld; row n is position n % T). inverse = true rotates by minus the angle: the backward of
// the rotation (it is orthogonal), applied to the gradient.
void rope_forward(float* x, const float* inv_freq, int B, int T, int heads, int hs, int ld, bool inverse = false);

}  // namespace zt::models::cpu

namespace zt::models::ops {

// On a context's view: in place on the first `heads` head vectors of every row (stride ld) of x
// (B*T rows); inv_freq: hs/2 host floats (rope_inv_freq). inverse: the backward, on a gradient.
void rope(ComputeContext& ctx, BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
          bool inverse);

// The op on a CUDA context (rope.cu; in a build without CUDA, the "built without CUDA" error of
// models/no_cuda.cpp).
namespace on_cuda {
void rope(ComputeContext& ctx, BufferView x, std::span<const float> inv_freq, int B, int T, int heads, int hs, int ld,
          bool inverse);
}  // namespace on_cuda

}  // namespace zt::models::ops
