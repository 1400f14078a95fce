// Token embedding without learned positions (CPU reference, fp32): Llama's embed_tokens.
#pragma once

#include <cstdint>

namespace zt::models::cpu {

// tokens (N), wte (V, C) -> out (N, C) = wte[tokens[n], :]
void token_embedding_forward(float* out, const std::int32_t* tokens, const float* wte, int N, int C);
// dout (N, C) -> dwte[tokens[n], :] += dout[n, :]
void token_embedding_backward(float* dwte, const float* dout, const std::int32_t* tokens, int N, int C);

}  // namespace zt::models::cpu
