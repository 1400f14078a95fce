#!/usr/bin/env python3
"""GPT-2 124M on one GPU: zerotrain vs PyTorch eager vs torch.compile — tokens/s and MFU.

UNMEASURED so far: the sessions that wrote it had no GPU (see bench/README.md). Run it on a GPU
machine with a CUDA build of zerotrain (ZT_BIN, built with -DZT_CUDA=ON) and torch with CUDA.

  zerotrain   `zerotrain train` on 1 rank, train.device=cuda, precision.dtype=bf16, GPT-2 124M
              (12 x 768, vocab 50257 padded to 50304, T = 1024), micro batch --batch, ZeRO stage 0,
              full training step (forward, backward, AdamW); tokens/s = median of metrics.jsonl
              after --warmup steps. Data: a synthetic llm.c shard of random tokens written here.
  torch       tools/torch_gpt2_gpu.py --mode eager / --mode compile: the same model and step
              (bf16 autocast, fused AdamW, clipping), median step time.
MFU = (6 N + 12 L T C) * tokens/s / peak (dense bf16 datasheet peak: H100/H200 989 TFLOP/s).

  bench/perf_gpu.py [--batch 16] [--steps 30]
Writes bench/results/perf_gpu.md.
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import perf_common as pc


def write_random_shard(path, tokens, vocab, seed=0):
    import random
    rnd = random.Random(seed)
    header = struct.pack("<256i", 20240520, 1, tokens, *([0] * 253))
    with open(path, "wb") as f:
        f.write(header)
        f.write(struct.pack(f"<{tokens}H", *(rnd.randrange(vocab) for _ in range(tokens))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--output")
    args = ap.parse_args()
    L, C, T, Vp = 12, 768, 1024, 50304
    n = 12 * L * C * C + Vp * C
    flops_per_token = 6 * n + 12 * L * T * C
    rows = []
    with tempfile.TemporaryDirectory(prefix="zt-perf-gpu-") as tmp:
        shard = os.path.join(tmp, "train_000000.bin")
        write_random_shard(shard, (args.batch * (args.steps + 2)) * (T + 1) + 1, 50257)
        records, log = pc.run_zerotrain([pc.zerotrain_bin()], [
            "model.preset=gpt2-124m", "model.n_layer=12", "model.n_head=12", "model.n_embd=768",
            "model.vocab_size=50257", "model.block_size=1024", f"data.train_files={shard}", "data.val_files=",
            f"train.train_micro_batch_size_per_gpu={args.batch}", "train.device=cuda", "precision.dtype=bf16",
            "zero_optimization.stage=0", "zero_optimization.reduce_bucket_size=500000000"],
            args.steps, os.path.join(tmp, "zt"))
        tok = statistics.median(r["tokens_per_s"] for r in records[args.warmup:])
        rows.append(("zerotrain", tok, args.batch * T / tok * 1e3, None))
        py = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
                            capture_output=True, text=True)
        from perf_peer import torch_python
        tpy = torch_python()
        for mode in ("eager", "compile"):
            out = subprocess.run([tpy, str(pc.ROOT / "tools" / "torch_gpt2_gpu.py"), "--mode", mode, "--batch",
                                  str(args.batch), "--steps", str(args.steps), "--warmup", str(args.warmup)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"torch {mode} failed:\n{out.stderr[-3000:]}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append((f"torch {mode}", r["tokens_per_s"], r["ms_per_step"], r["device"]))
        del py
    dev = next((d for *_, d in rows if d), "?")
    peak = 989e12 if ("H100" in dev or "H200" in dev) else 0.0
    lines = pc.header("GPT-2 124M, one GPU: zerotrain vs PyTorch eager vs torch.compile", [
        f"device: {dev}; batch {args.batch} x {T}, bf16; {args.steps} steps, medians after {args.warmup}",
        f"FLOPs per token {flops_per_token:.3e} (6N + 12LTC, N = {n})"])
    lines += ["", "| trainer | tokens/s | ms/step | MFU | ratio to torch eager |", "| --- | --- | --- | --- | --- |"]
    eager = next(t for name, t, _, _ in rows if name == "torch eager")
    for name, t, ms, _ in rows:
        mfu = f"{t * flops_per_token / peak:.1%}" if peak else "?"
        lines.append(f"| {name} | {t:.0f} | {ms:.1f} | {mfu} | {t / eager:.2f} |")
    pc.write_results(args.output or pc.ROOT / "bench" / "results" / "perf_gpu.md", lines)


if __name__ == "__main__":
    main()
