#!/usr/bin/env python3
"""GPT-2 training steps on one GPU in PyTorch (eager or torch.compile): tokens/s and MFU, the peer
of zerotrain's single-GPU run in bench/perf_gpu.py.

The model is tools/torch_gpt2_peer.py's GPT2 (zerotrain's architecture: tied wte, pre-LN, GELU
tanh, fused SDPA attention) with zerotrain's init; bf16 autocast (fp32 master weights), fused
AdamW, random tokens (the speed does not depend on the data). One JSON line on stdout:
{"mode", "ms_per_step", "tokens_per_s", "mfu", "peak_flops", "flops_per_step", "loss", "max_mem_bytes"}.
MFU = (6 N + 12 L T C) * tokens / s / peak, N = 12 L C^2 + V C (models/flops.h's convention).
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_gpt2_peer import GPT2, zerotrain_init  # noqa: E402

PEAKS = {"H200": 989e12, "H100": 989e12, "A100": 312e12}  # dense bf16, vendor datasheets


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mode", choices=["eager", "compile"], default="eager")
    ap.add_argument("--n-layer", type=int, default=12)
    ap.add_argument("--n-head", type=int, default=12)
    ap.add_argument("--n-embd", type=int, default=768)
    ap.add_argument("--vocab-size", type=int, default=50257)
    ap.add_argument("--padded-vocab", type=int, default=50304)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    dev = torch.device("cuda")
    L, C, T, B, V, Vp = args.n_layer, args.n_embd, args.seq, args.batch, args.vocab_size, args.padded_vocab
    init, _ = zerotrain_init(L, C, Vp, T, 42) if L * C < 4096 else ({}, None)
    if not init:  # the exact init is slow in Python for 124M; the speed does not depend on the values
        from torch_gpt2_peer import param_layout
        import numpy as np
        rng = np.random.default_rng(42)
        for tensors in param_layout(L, C, Vp, T):
            for name, shape, kind, std, _ in tensors:
                init[name] = (rng.standard_normal(shape, dtype=np.float32) * float(std) if kind == "normal" else
                              np.full(shape, 1.0 if kind == "ones" else 0.0, np.float32))
    model = GPT2(L, args.n_head, C, V, T, init).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    step_fn = model
    if args.mode == "compile":
        step_fn = torch.compile(model)
    x = torch.randint(0, V, (B, T), device=dev)
    y = torch.randint(0, V, (B, T), device=dev)
    times, loss = [], None
    for i in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = step_fn(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(time.perf_counter() - t0)
    s = statistics.median(times)
    n = 12 * L * C * C + Vp * C
    flops = (6 * n + 12 * L * T * C) * B * T
    name = torch.cuda.get_device_name()
    peak = next((p for k, p in PEAKS.items() if k in name), 0.0)
    print(json.dumps({"mode": args.mode, "device": name, "torch": torch.__version__, "ms_per_step": s * 1e3,
                      "tokens_per_s": B * T / s, "flops_per_step": flops, "peak_flops": peak,
                      "mfu": flops / s / peak if peak else None, "loss": float(loss),
                      "max_mem_bytes": torch.cuda.max_memory_allocated()}))


if __name__ == "__main__":
    main()
