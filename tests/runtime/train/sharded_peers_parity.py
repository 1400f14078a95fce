#!/usr/bin/env python3
"""zerotrain's ZeRO stage 3 against the sharded trainers bench/perf_peer.py measures it with:
PyTorch FSDP2 (fully_shard per block) and DeepSpeed's ZeRO stage 3, both from PyPI, through
tools/torch_gpt2_peer.py. Same tiny GPT-2, same initial weights and batches, fp32, 2 ranks under
mpirun: the losses must agree to 1e-5 relative at every step (measured ~2e-7), so that the
benchmark's speed ratios compare the same training. It also shows the peer runs its blocks as
modules of their own (FSDP2 needs that to shard them) and that DeepSpeed still trains them.

Usage: sharded_peers_parity.py ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tiny_shards import prepare_tiny_shards
from train_job import arguments, fail, free_port

STEPS, RANKS = 12, 2
TOLERANCE = 1e-5


def losses(path):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    values = [r["loss"] for r in rows if "step" in r and "loss" in r]
    if len(values) != STEPS:
        fail(f"{path}: {len(values)} steps recorded, expected {STEPS}")
    return values


def main():
    zerotrain, mpirun, source = arguments(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_files = prepare_tiny_shards(zerotrain, work, "line {i}: shards of a model, gathered and freed", 400)
        zt = [*mpirun, "-np", str(RANKS), zerotrain, "train", "--config", source / "configs/default.yaml",
              "--set", f"data.train_files={train_files}", "--set", "data.val_files=", "--set", f"train.steps={STEPS}",
              "--set", "train.eval_interval=0", "--set", "train.sample_interval=0", "--set", "checkpoint.interval=0",
              "--set", "zero_optimization.stage=3", "--set", f"logging.run_dir={work}/zt"]
        result = subprocess.run([str(a) for a in zt], capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"zerotrain failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
        reference = losses(work / "zt" / "metrics.jsonl")
        for name, mode in (("FSDP2", ["--mode", "fsdp2"]), ("DeepSpeed stage 3", ["--mode", "deepspeed", "--zero-stage", "3"])):
            out = work / f"{mode[1]}.jsonl"
            peer = [*mpirun, "-np", str(RANKS), "-x", "OMP_NUM_THREADS=1", "-x", "DS_ACCELERATOR=cpu", sys.executable,
                    source / "tools/torch_gpt2_peer.py", *mode, "--steps", str(STEPS), "--train-files", train_files,
                    "--out", out, "--master-port", str(free_port())]
            result = subprocess.run([str(a) for a in peer], capture_output=True, text=True)
            if result.returncode != 0:
                fail(f"the {name} peer failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
            theirs = losses(out)
            relative = [abs(a - b) / abs(a) for a, b in zip(reference, theirs)]
            print(f"{name}: largest relative loss difference to zerotrain's stage 3 over {STEPS} steps "
                  f"{max(relative):.2e} (last loss {reference[-1]:.4f} vs {theirs[-1]:.4f})")
            for step, r in enumerate(relative, start=1):
                if r > TOLERANCE:
                    fail(f"{name} step {step}: loss {theirs[step - 1]!r} vs zerotrain's {reference[step - 1]!r} "
                         f"(relative {r:.2e} > {TOLERANCE})")
    print("PASS")


if __name__ == "__main__":
    main()
