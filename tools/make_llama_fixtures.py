#!/usr/bin/env python3
"""Reference fixtures for zerotrain's Llama family from Hugging Face transformers.

Builds small models with transformers' own classes and random initialisation (fp32), and writes
for each: the config, a batch, the weights in zerotrain's flat parameter order, and the logits,
loss and every parameter gradient of that batch:

  tests/models/fixtures/llama_tiny.bin   LlamaForCausalLM: grouped-query attention (4 heads, 2 kv
                                         heads), untied lm_head, Llama 3 RoPE scaling
  tests/models/fixtures/qwen3_tiny.bin   Qwen3ForCausalLM: QK-norm, multi-query attention (2 heads,
                                         1 kv head), tied embeddings

The weights are stored in fp32 and the model then runs in float64 from exactly those values, so
the logits, loss and gradients are the exact answer the fp32 C++ code is held against
(tests/models/llama_parity_test.cpp). transformers computes the rotary cos/sin in fp32 even in a
float64 model, as zerotrain does. The loss is the mean cross-entropy over targets != -1 (targets
are the next tokens, already shifted).

Tensor names map one to one (zerotrain block.tensor -> transformers):
  embedding.embed_tokens.weight -> model.embed_tokens.weight
  layers.{i}.<name>             -> model.layers.{i}.<name>   (input_layernorm, self_attn.{q,k,v,o}_proj,
                                                             self_attn.{q,k}_norm, post_attention_layernorm,
                                                             mlp.{gate,up,down}_proj; all .weight)
  head.norm.weight              -> model.norm.weight
  head.lm_head.weight           -> lm_head.weight (untied only)
No q/k permutation: zerotrain's RoPE uses transformers' rotate_half layout.

Usage:  python3 tools/make_llama_fixtures.py            # writes both fixtures
        python3 tools/make_llama_fixtures.py --counts   # parameter counts of the real presets
Needs torch and transformers (tools/requirements-fixtures.txt); CI does not run this: the fixtures
are committed.

Fixture format (little-endian): char[4] "ZTL1"; int32 version = 1; int32 n_layer, n_head,
n_kv_head, n_embd, intermediate_size, vocab_size, block_size, tie_embeddings, qk_norm; float64
rope_theta; float32 rope_factor (0 = none), low_freq_factor, high_freq_factor; int32
original_max_position; float32 rms_norm_eps; int32 B, T; int64 n_params; int32 tokens[B*T];
int32 targets[B*T]; float32 params[n_params]; float32 logits[B*T*V]; float64 loss;
float32 grads[n_params].
"""
import argparse
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "models" / "fixtures"


def zerotrain_names(cfg):
    """transformers' parameter names in zerotrain's flat order."""
    names = ["model.embed_tokens.weight"]
    for i in range(cfg["n_layer"]):
        p = f"model.layers.{i}."
        names += [p + "input_layernorm.weight", p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
                  p + "self_attn.v_proj.weight", p + "self_attn.o_proj.weight"]
        if cfg["qk_norm"]:
            names += [p + "self_attn.q_norm.weight", p + "self_attn.k_norm.weight"]
        names += [p + "post_attention_layernorm.weight", p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight",
                  p + "mlp.down_proj.weight"]
    names.append("model.norm.weight")
    if not cfg["tie"]:
        names.append("lm_head.weight")
    return names


def build(kind, cfg, seed):
    import torch
    import transformers
    common = dict(vocab_size=cfg["V"], hidden_size=cfg["C"], intermediate_size=cfg["I"],
                  num_hidden_layers=cfg["n_layer"], num_attention_heads=cfg["NH"], num_key_value_heads=cfg["KV"],
                  max_position_embeddings=cfg["block"], rms_norm_eps=cfg["eps"], rope_theta=cfg["theta"],
                  tie_word_embeddings=cfg["tie"], initializer_range=0.1, attention_bias=False,
                  attn_implementation="eager")
    if cfg["factor"]:
        common["rope_scaling"] = {"rope_type": "llama3", "factor": cfg["factor"], "low_freq_factor": cfg["low"],
                                  "high_freq_factor": cfg["high"], "original_max_position_embeddings": cfg["orig"]}
    torch.manual_seed(seed)
    if kind == "llama":
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(mlp_bias=False, **common))
    else:
        model = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(head_dim=cfg["C"] // cfg["NH"], **common))
    with torch.no_grad():  # RMSNorm gains start at 1; perturb them so a misplaced gain would show
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.add_(0.2 * torch.randn_like(p))
    return model


def write_fixture(kind, cfg, seed, out):
    import numpy as np
    import torch
    import torch.nn.functional as F
    model = build(kind, cfg, seed)
    params = dict(model.named_parameters())
    names = zerotrain_names(cfg)
    assert set(names) == set(params), f"layout mismatch: {set(names) ^ set(params)}"
    flat32 = torch.cat([params[n].detach().reshape(-1) for n in names]).numpy().astype("<f4")

    B, T = cfg["B"], cfg["T"]
    g = torch.Generator().manual_seed(seed + 1)
    seq = torch.randint(0, cfg["V"], (B, T + 1), generator=g)
    tokens, targets = seq[:, :-1].contiguous(), seq[:, 1:].clone()
    targets[0, T // 2] = -1  # exercise the ignore index
    targets[1, T - 1] = -1

    model = model.double()  # float64 from the fp32 values (exact widening)
    model.zero_grad()
    logits = model(input_ids=tokens).logits
    loss = F.cross_entropy(logits.reshape(-1, cfg["V"]), targets.reshape(-1), ignore_index=-1)
    loss.backward()
    params = dict(model.named_parameters())
    grads = torch.cat([params[n].grad.reshape(-1) for n in names]).numpy().astype("<f4")

    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        f.write(b"ZTL1")
        f.write(struct.pack("<10i", 1, cfg["n_layer"], cfg["NH"], cfg["KV"], cfg["C"], cfg["I"], cfg["V"],
                            cfg["block"], int(cfg["tie"]), int(cfg["qk_norm"])))
        f.write(struct.pack("<d3fif", cfg["theta"], cfg["factor"], cfg["low"], cfg["high"], cfg["orig"], cfg["eps"]))
        f.write(struct.pack("<2iq", B, T, flat32.size))
        f.write(tokens.numpy().astype("<i4").tobytes())
        f.write(targets.numpy().astype("<i4").tobytes())
        f.write(flat32.tobytes())
        f.write(logits.detach().numpy().astype("<f4").tobytes())
        f.write(struct.pack("<d", loss.item()))
        f.write(grads.tobytes())
    print(f"wrote {out} ({out.stat().st_size} bytes): {flat32.size} parameters, loss {loss.item():.6f}")


LLAMA = dict(n_layer=2, NH=4, KV=2, C=32, I=48, V=64, block=16, tie=False, qk_norm=False, theta=10000.0,
             factor=4.0, low=1.0, high=4.0, orig=8, eps=1e-5, B=2, T=12)
QWEN3 = dict(n_layer=2, NH=2, KV=1, C=16, I=24, V=48, block=16, tie=True, qk_norm=True, theta=1000.0,
             factor=0.0, low=1.0, high=4.0, orig=8192, eps=1e-6, B=2, T=10)


def counts():
    """Parameter counts of the real models' configs, instantiated on the meta device."""
    import torch
    import transformers
    configs = {
        "smollm-135m": dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                            num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=2048,
                            tie_word_embeddings=True),
        "llama-3.2-1b": dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                             num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072,
                             rope_theta=500000.0, tie_word_embeddings=True,
                             rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                           "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}),
    }
    for name, kwargs in configs.items():
        with torch.device("meta"):
            model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**kwargs))
        print(f"{name}: {sum(p.numel() for p in model.parameters()):,} parameters")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--counts", action="store_true", help="print the real presets' parameter counts and exit")
    ap.add_argument("--out-dir", default=str(FIXTURES))
    args = ap.parse_args()
    if args.counts:
        counts()
        return
    write_fixture("llama", LLAMA, 1234, Path(args.out_dir) / "llama_tiny.bin")
    write_fixture("qwen3", QWEN3, 4321, Path(args.out_dir) / "qwen3_tiny.bin")


if __name__ == "__main__":
    main()
