// zt_dump_gpt2_init OUT.bin [SEED] [B] [T]: writes tiny GPT-2's initial parameters (zerotrain's
// deterministic init) and a fixed batch, for tools/make_gpt2_fixtures.py to rebuild the same
// model in PyTorch.
//
// Format (little-endian): char[4] "ZTG2"; int32 version = 1; int32 n_layer, n_head, n_embd,
// vocab_size, padded_vocab_size, block_size, B, T; uint64 seed; int64 n_params;
// int32 tokens[B*T]; int32 targets[B*T] (-1 = ignored); float32 params[n_params] — block after
// block, each block's tensors in layout order (embedding: wte, wpe; each layer: ln_1.weight,
// ln_1.bias, attn.c_attn.weight (3C, C), attn.c_attn.bias, attn.c_proj.weight, attn.c_proj.bias,
// ln_2.weight, ln_2.bias, mlp.c_fc.weight (4C, C), mlp.c_fc.bias, mlp.c_proj.weight (C, 4C),
// mlp.c_proj.bias; head: ln_f.weight, ln_f.bias). Weights are (out, in) as in nn.Linear.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "models/gpt2.h"
#include "models/model_state.h"

namespace {
template <typename T> void put(std::ofstream& out, const T& v) { out.write(reinterpret_cast<const char*>(&v), sizeof v); }
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.bin [SEED] [B] [T]\n", argv[0]);
    return 2;
  }
  std::uint64_t seed = argc > 2 ? std::stoull(argv[2]) : 1234;
  int B = argc > 3 ? std::stoi(argv[3]) : 2;
  auto config = zt::models::GPT2Config::preset("tiny");
  int T = argc > 4 ? std::stoi(argv[4]) : config.block_size;
  zt::models::GPT2 model(config);
  zt::models::ModelState state(model, zt::Device::cpu(), zt::DType::f32);
  state.init(seed);
  std::vector<float> params = state.params_f32();

  // Tokens uniform over the vocabulary; targets the next token; the last position of every row
  // and one in the middle are ignored (-1) to exercise the ignore index.
  std::mt19937_64 rng(seed ^ 0xBA7C4ull);
  std::vector<std::int32_t> tokens(B * T), targets(B * T);
  for (auto& t : tokens) t = static_cast<std::int32_t>(rng() % config.vocab_size);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) targets[b * T + t] = t + 1 < T ? tokens[b * T + t + 1] : -1;
  targets[T / 2] = -1;

  std::ofstream out(argv[1], std::ios::binary);
  out.write("ZTG2", 4);
  put(out, std::int32_t{1});
  for (int v : {config.n_layer, config.n_head, config.n_embd, config.vocab_size, config.padded_vocab_size,
                config.block_size, B, T})
    put(out, static_cast<std::int32_t>(v));
  put(out, seed);
  put(out, static_cast<std::int64_t>(params.size()));
  out.write(reinterpret_cast<const char*>(tokens.data()), tokens.size() * 4);
  out.write(reinterpret_cast<const char*>(targets.data()), targets.size() * 4);
  out.write(reinterpret_cast<const char*>(params.data()), params.size() * 4);
  if (!out) {
    std::fprintf(stderr, "could not write %s\n", argv[1]);
    return 1;
  }
  std::printf("wrote %s: %zu parameters, batch (%d, %d), seed %llu\n", argv[1], params.size(), B, T,
              static_cast<unsigned long long>(seed));
  return 0;
}
