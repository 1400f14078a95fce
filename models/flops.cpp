#include "models/flops.h"

namespace zt::models::flops {

double linear(double tokens, double in, double out) { return 6.0 * tokens * in * out; }

double attention(double B, double T, double C) { return 12.0 * B * T * T * C; }

double gpt2_step(int n_layer, int n_embd, int vocab_size, int B, int T) {
  double tokens = static_cast<double>(B) * T, C = n_embd;
  double per_layer = linear(tokens, C, 3 * C) + linear(tokens, C, C) + linear(tokens, C, 4 * C) +
                     linear(tokens, 4 * C, C) + attention(B, T, C);
  return n_layer * per_layer + linear(tokens, C, vocab_size);
}

}  // namespace zt::models::flops
