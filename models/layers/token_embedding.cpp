#include "models/layers/token_embedding.h"

#include <cstddef>
#include <cstring>

namespace zt::models::cpu {

void token_embedding_forward(float* out, const std::int32_t* tokens, const float* wte, int N, int C) {
  for (int n = 0; n < N; ++n)
    std::memcpy(out + static_cast<std::size_t>(n) * C, wte + static_cast<std::size_t>(tokens[n]) * C,
                sizeof(float) * C);
}

void token_embedding_backward(float* dwte, const float* dout, const std::int32_t* tokens, int N, int C) {
  for (int n = 0; n < N; ++n) {
    float* row = dwte + static_cast<std::size_t>(tokens[n]) * C;
    const float* d = dout + static_cast<std::size_t>(n) * C;
    for (int c = 0; c < C; ++c) row[c] += d[c];
  }
}

}  // namespace zt::models::cpu
