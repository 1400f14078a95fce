#!/usr/bin/env python3
"""zerotrain's bf16 and fp16 training against an independent PyTorch implementation of the same
semantics (tools/torch_gpt2_peer.py --precision: 16-bit parameters cast from fp32 masters after
every step, each op computing in fp32 on 16-bit inputs and rounding what it stores once, 16-bit
parameter gradients accumulated in fp32, fp32 all-reduce, clipping and AdamW on the masters, fp16
with the dynamic loss scale). Same tiny GPT-2, same initial weights and batches, 2 ranks, 20 steps,
in fp32, bf16 and fp16.

What must hold, and why those bounds:
  * fp32: the two agree to 1e-4 at every step (measured ~1e-6): init, data order, schedule and
    optimizer are the same, so the 16-bit comparisons compare only the 16-bit arithmetic.
  * 16-bit, absolute: |zt - torch| <= u16 * mean loss / sqrt(N) at every step, u16 the unit
    roundoff (2^-8 bf16, 2^-11 fp16), N the tokens per step over all ranks. That is the size by
    which a single independent rounding of the logits into the 16-bit type moves the mean of N
    per-token losses (each moves by about u16 times its own size, independently, and the mean
    averages N of them). Two implementations that round at the same points and differ only in the
    order of their fp32 sums must differ by less than one such rounding: a value then lands on the
    other side of a rounding boundary only when its fp32 results straddle it. An implementation
    that rounded at other points (a 16-bit accumulator, an unrounded activation, bf16 attention
    scores) moves the loss by whole roundings, at every layer.
  * 16-bit, relative: the root mean square over the steps of zt16 - torch16 is under half of
    zt16 - zt32 and of torch16 - torch32: the two 16-bit runs are closer to each other than either
    is to fp32 training, so the test can tell 16-bit training from fp32 training.
  * fp16: both skipped the same steps for overflow (none are expected at the default scale).

Usage: pytorch_mixed_precision_parity.py ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tiny_shards import prepare_tiny_shards
from train_job import free_port

STEPS, RANKS, MICRO_BATCH, SEQ = 20, 2, 4, 64
UNIT_ROUNDOFF = {"bf16": 2.0**-8, "fp16": 2.0**-11}


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def records(path):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    rows = [r for r in rows if "step" in r and "loss" in r]
    if len(rows) != STEPS:
        fail(f"{path}: {len(rows)} steps recorded, expected {STEPS}")
    return rows


def rms(values):
    return math.sqrt(sum(v * v for v in values) / len(values))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    zerotrain, mpirun = sys.argv[1], sys.argv[2:]
    source = Path(__file__).resolve().parents[3]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_files = prepare_tiny_shards(zerotrain, work, "line {i}: the quick brown fox jumps over the lazy dog", 600)
        runs = {}
        for dtype in ("fp32", "bf16", "fp16"):
            zt = [*mpirun, "-np", str(RANKS), zerotrain, "train", "--config", source / "configs/default.yaml",
                  "--set", f"data.train_files={train_files}", "--set", "data.val_files=",
                  "--set", f"train.steps={STEPS}", "--set", "train.eval_interval=0",
                  "--set", "train.sample_interval=0", "--set", "checkpoint.interval=0",
                  "--set", f"logging.run_dir={work}/zt-{dtype}", "--set", f"precision.dtype={dtype}",
                  "--set", "zero_optimization.communication_data_type=fp32"]
            result = subprocess.run(zt, capture_output=True, text=True)
            if result.returncode != 0:
                fail(f"zerotrain {dtype} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
            peer = [*mpirun, "-np", str(RANKS), "-x", "OMP_NUM_THREADS=1", sys.executable,
                    source / "tools/torch_gpt2_peer.py", "--precision", dtype, "--steps", str(STEPS),
                    "--train-files", train_files, "--micro-batch", str(MICRO_BATCH),
                    "--block-size", str(SEQ), "--out", work / f"torch-{dtype}.jsonl",
                    "--master-port", str(free_port())]
            result = subprocess.run([str(a) for a in peer], capture_output=True, text=True)
            if result.returncode != 0:
                fail(f"the PyTorch peer ({dtype}) failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
            runs[dtype] = (records(work / f"zt-{dtype}" / "metrics.jsonl"), records(work / f"torch-{dtype}.jsonl"))

    def losses(dtype, side):
        return [r["loss"] for r in runs[dtype][side]]

    gap32 = [abs(a - b) for a, b in zip(losses("fp32", 0), losses("fp32", 1))]
    print(f"fp32: zerotrain vs PyTorch, largest loss difference {max(gap32):.2e}")
    if max(gap32) > 1e-4:
        fail(f"fp32 runs differ by {max(gap32):.2e} > 1e-4: the two sides do not train the same job")

    tokens = RANKS * MICRO_BATCH * SEQ
    for dtype in ("bf16", "fp16"):
        zt, torch = losses(dtype, 0), losses(dtype, 1)
        between = [a - b for a, b in zip(zt, torch)]
        zt_to_fp32 = [a - b for a, b in zip(zt, losses("fp32", 0))]
        torch_to_fp32 = [a - b for a, b in zip(torch, losses("fp32", 1))]
        bound = UNIT_ROUNDOFF[dtype] * (sum(zt) / len(zt)) / math.sqrt(tokens)
        print(f"{dtype}: zerotrain vs PyTorch largest {max(map(abs, between)):.2e} (bound {bound:.2e}), rms "
              f"{rms(between):.2e}; to fp32: zerotrain rms {rms(zt_to_fp32):.2e}, PyTorch rms {rms(torch_to_fp32):.2e}")
        for step, d in enumerate(between, start=1):
            if abs(d) > bound:
                fail(f"{dtype} step {step}: zerotrain {zt[step - 1]!r} vs PyTorch {torch[step - 1]!r} differ by "
                     f"{abs(d):.2e} > {bound:.2e}")
        if rms(between) > 0.5 * min(rms(zt_to_fp32), rms(torch_to_fp32)):
            fail(f"{dtype}: the 16-bit runs are not much closer to each other (rms {rms(between):.2e}) than to fp32 "
                 f"(rms {rms(zt_to_fp32):.2e} and {rms(torch_to_fp32):.2e})")
        if dtype == "fp16":
            zt_skips = [bool(r.get("skipped", False)) for r in runs[dtype][0]]
            torch_skips = [bool(r.get("skipped", False)) for r in runs[dtype][1]]
            if zt_skips != torch_skips:
                fail(f"fp16 skipped steps differ: zerotrain {zt_skips}, PyTorch {torch_skips}")
    print("PASS")


if __name__ == "__main__":
    main()
