// A minimal reference AdamW (PyTorch's torch.optim.AdamW semantics, decoupled weight decay) for
// the model tests; the real fused optimizer lives in optim/. Applies weight decay only to the
// tensors whose layout marks decay (GPT-2 rule: matrices and embeddings, not biases or LayerNorm).
#pragma once

#include <cmath>
#include <vector>

#include "models/model.h"

namespace zt::models::test {

struct AdamWReference {
  float lr = 3e-3f, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0.1f;
  int step = 0;
  std::vector<double> m, v;

  // params, grads: the model's flat fp32 vectors, block after block.
  void update(const Model& model, std::vector<float>& params, const std::vector<float>& grads) {
    if (m.empty()) m.assign(params.size(), 0.0), v.assign(params.size(), 0.0);
    ++step;
    double bc1 = 1.0 - std::pow(beta1, step), bc2 = 1.0 - std::pow(beta2, step);
    std::size_t base = 0;
    for (std::size_t b = 0; b < model.num_blocks(); ++b) {
      for (const ParamTensor& t : model.block(b).layout().tensors())
        for (std::size_t k = 0; k < t.numel; ++k) {
          std::size_t i = base + t.offset + k;
          double g = grads[i];
          double p = params[i];
          if (t.decay) p *= 1.0 - static_cast<double>(lr) * weight_decay;
          m[i] = beta1 * m[i] + (1.0 - beta1) * g;
          v[i] = beta2 * v[i] + (1.0 - beta2) * g * g;
          double denom = std::sqrt(v[i] / bc2) + eps;
          p -= lr * (m[i] / bc1) / denom;
          params[i] = static_cast<float>(p);
        }
      base += model.block(b).param_count();
    }
  }
};

}  // namespace zt::models::test
