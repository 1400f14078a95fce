#!/usr/bin/env python3
"""GPT-2 124M on one GPU: zerotrain vs PyTorch eager vs torch.compile — tokens/s, MFU and memory.

  zerotrain   `zerotrain train` on 1 rank, train.device=cuda, precision.dtype=bf16, GPT-2 124M
              (12 x 768, vocab 50257 padded to 50304, T = 1024), micro batch --batch, ZeRO stage 0,
              full training step (forward, backward, AdamW); tokens/s = median of metrics.jsonl
              after --warmup steps. Data: a synthetic llm.c shard of random tokens written here.
  torch       tools/torch_gpt2_gpu.py --mode eager / --mode compile: the same model and step
              (bf16 autocast, fused AdamW, clipping), median step time.
MFU = (6 N + 12 L T C) * tokens/s / peak, peak = the GPU's dense bf16 datasheet rate
(perf_common.gpu_bf16_peak: H100/H200 SXM 989 TFLOP/s, NVL 835, H100 PCIe 756, A100 312).
Memory: zerotrain's tracked bytes per category after the last step and its peak, next to
`zerotrain plan` for the same config (model state, buckets, activations), and PyTorch's
torch.cuda.max_memory_allocated.

PyTorch: ZT_TORCH_PYTHON names the Python to run it with ("" = leave the torch rows out); else this
Python when it has torch with CUDA, else perf_peer.torch_python().
ZT_BIN names the zerotrain binary (a CUDA build).

  bench/perf_gpu.py [--batch 16] [--steps 30] [--warmup 5] [--output FILE]
Writes bench/results/perf_gpu.md.
"""
import argparse
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import perf_common as pc

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def write_random_shard(path, tokens, vocab, seed=0):
    import random
    rnd = random.Random(seed)
    header = struct.pack("<256i", 20240520, 1, tokens, *([0] * 253))
    with open(path, "wb") as f:
        f.write(header)
        f.write(struct.pack(f"<{tokens}H", *(rnd.randrange(vocab) for _ in range(tokens))))


def torch_python():
    if "ZT_TORCH_PYTHON" in os.environ:
        return os.environ["ZT_TORCH_PYTHON"] or None
    ok = subprocess.run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"],
                        capture_output=True).returncode == 0
    if ok:
        return sys.executable
    from perf_peer import torch_python as venv_python
    return venv_python()


def plan_bytes(sets):
    """Stage 0, 1 rank, from `zerotrain plan`: {column: bytes}."""
    cmd = [pc.zerotrain_bin(), "plan", "--config", "configs/default.yaml", "--device", "cuda", "--world-size", "1"]
    for kv in sets:
        cmd += ["--set", kv]
    out = subprocess.run(cmd, cwd=pc.ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"zerotrain plan failed:\n{out.stdout}\n{out.stderr}")
    lines = out.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:1] == ["stage"])
    columns = re.split(r"\s{2,}", lines[head].strip())
    row = re.split(r"\s{2,}", next(line for line in lines[head + 1:] if line.split()[:1] == ["0"]).strip())
    result = {}
    for name, cell in zip(columns, row):
        m = re.fullmatch(r"([-0-9.]+) (B|KiB|MiB|GiB|TiB)", cell)
        if m:
            result[name] = float(m.group(1)) * UNITS[m.group(2)]
    return result


def gib(x):
    return f"{x / 2**30:.2f}" if x is not None else "-"


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
    dev = pc.gpu_name()
    peak = pc.gpu_bf16_peak(dev)
    rows, mem_rows, notes = [], [], []
    with tempfile.TemporaryDirectory(prefix="zt-perf-gpu-") as tmp:
        shard = os.path.join(tmp, "train_000000.bin")
        write_random_shard(shard, (args.batch * (args.steps + 2)) * (T + 1) + 1, 50257)
        sets = ["model.preset=gpt2-124m", "model.n_layer=12", "model.n_head=12", "model.n_embd=768",
                "model.vocab_size=50257", "model.block_size=1024", f"data.train_files={shard}", "data.val_files=",
                f"train.train_micro_batch_size_per_gpu={args.batch}", "train.device=cuda", "precision.dtype=bf16",
                "zero_optimization.stage=0", "zero_optimization.reduce_bucket_size=500000000"]
        output = args.output or pc.ROOT / "bench" / "results" / "perf_gpu.md"

        def write_table():
            """The table as measured so far: a run cut short by a time limit keeps its rows."""
            lines = pc.header("GPT-2 124M, one GPU: zerotrain vs PyTorch eager vs torch.compile", [
                f"device: {dev}; bf16 peak {peak / 1e12:.0f} TFLOP/s" if peak else f"device: {dev}; bf16 peak unknown",
                f"batch {args.batch} x {T}, bf16; {args.steps} steps, medians after {args.warmup}",
                f"FLOPs per token {flops_per_token:.3e} (6N + 12LTC, N = {n})", *notes])
            zt = next((t for name, t, _ in rows if name == "zerotrain"), None)
            base = next((t for name, t, _ in rows if name == "torch compile"), None)
            lines += ["", "| trainer | tokens/s | ms/step | MFU | zerotrain / this |", "| --- | --- | --- | --- | --- |"]
            for name, t, ms in rows:
                mfu = f"{t * flops_per_token / peak:.1%}" if peak else "?"
                lines.append(f"| {name} | {t:.0f} | {ms:.1f} | {mfu} | {f'{zt / t:.2f}' if zt else '-'} |")
            if base and zt:
                lines += ["", f"zerotrain / torch.compile: {zt / base:.2f}x tokens/s"]
            lines += ["", "Memory on the GPU (GiB): `zerotrain plan` (stage 0, 1 rank) against zerotrain's tracked bytes "
                      "after the last step", "", "| category | plan | measured | measured / plan |",
                      "| --- | --- | --- | --- |", *mem_rows]
            pc.write_results(output, lines)

        try:
            records, log = pc.run_zerotrain([pc.zerotrain_bin()], sets, args.steps, os.path.join(tmp, "zt"))
        except (SystemExit, subprocess.CalledProcessError, RuntimeError) as e:
            # The PyTorch rows are still worth having when zerotrain fails.
            records = []
            notes.append("zerotrain failed: " + " / ".join(str(e).strip().splitlines()[-3:]))
        if records:
            tok = statistics.median(r["tokens_per_s"] for r in records[args.warmup:])
            rows.append(("zerotrain", tok, args.batch * T / tok * 1e3))
            last = records[-1]
            plan = plan_bytes([s for s in sets if not s.startswith("data.")])
            planned = sum(plan.get(k, 0) for k in ("model state", "buckets", "activations"))
            tracked = {k[4:]: v for k, v in last.items() if k.startswith("mem_") and k != "mem_peak"}
            for name, planned_key in (("params", "params"), ("grads", "grads"), ("optimizer", "optimizer"),
                                      ("buckets", "buckets"), ("activations", "activations")):
                got = tracked.get(name)
                want = plan.get(planned_key)
                ratio = f"{got / want:.3f}" if got is not None and want else "-"
                mem_rows.append(f"| {name} | {gib(want)} | {gib(got)} | {ratio} |")
            others = sum(v for k, v in tracked.items() if k not in ("params", "grads", "optimizer", "buckets", "activations"))
            mem_rows.append(f"| other (workspace, staging, gathered) | - | {gib(others)} | - |")
            mem_rows.append(f"| **peak** | {gib(planned)} | {gib(last.get('mem_peak'))} | "
                            f"{last['mem_peak'] / planned:.3f} |" if planned and "mem_peak" in last else "| **peak** | - | - | - |")
        write_table()
        tpy = torch_python()
        if not tpy:
            notes.append("torch rows left out: no Python with PyTorch and CUDA (ZT_TORCH_PYTHON)")
        for mode in ("eager", "compile") if tpy else ():
            out = subprocess.run([tpy, str(pc.ROOT / "tools" / "torch_gpt2_gpu.py"), "--mode", mode, "--batch",
                                  str(args.batch), "--steps", str(args.steps), "--warmup", str(args.warmup)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                notes.append(f"torch {mode} failed: {out.stderr.strip().splitlines()[-1:] or out.returncode}")
                write_table()
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append((f"torch {mode}", r["tokens_per_s"], r["ms_per_step"]))
            if r.get("max_mem_bytes"):
                mem_rows.append(f"| peak, torch {mode} (max_memory_allocated) | - | {gib(r['max_mem_bytes'])} | - |")
            write_table()
        if not records:
            sys.exit("zerotrain failed; the table has the PyTorch rows")

if __name__ == "__main__":
    main()
