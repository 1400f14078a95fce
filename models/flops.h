// FLOP counting for MFU.
//
// A matrix product of (M, K) by (K, N) is 2·M·K·N FLOPs; a Linear layer's backward does two of
// them (input and weight gradients), so forward + backward of a Linear with an (out, in) weight on
// `tokens` rows is 6·tokens·in·out. Attention's score and value products are 2·T·T·C each per
// sequence and layer in the forward (counted over the full T×T, as is customary, although the
// causal mask makes half of it unnecessary), so forward + backward is 3·4·B·T²·C = 12·B·T²·C per
// layer. Per token this is the familiar 6·N + 12·L·T·C, where N counts the parameters that take
// part in matrix products (all Linear weights and the tied LM head V·C; not the embeddings'
// lookups, biases or LayerNorms). Elementwise work (LayerNorm, GELU, softmax) is not counted.
#pragma once

namespace zt::models::flops {

double linear(double tokens, double in, double out);  // forward + backward
double attention(double B, double T, double C);       // forward + backward, one layer

// GPT-2 step (forward + backward) for a micro batch; what Model::flops_per_step returns for it
// when vocab_size is the padded vocabulary (the LM head's product is that wide).
double gpt2_step(int n_layer, int n_embd, int vocab_size, int B, int T);

}  // namespace zt::models::flops
