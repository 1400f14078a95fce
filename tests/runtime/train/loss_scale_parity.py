#!/usr/bin/env python3
"""fp16 dynamic loss scaling for real, held against DeepSpeed's own DynamicLossScaler.

zerotrain trains a tiny GPT-2 in fp16 on 2 ranks on the CPU with a scale that starts far too high
(initial_scale_power 32), hysteresis 2, a loss_scale_window of 5 steps and a min_loss_scale. The
gradients overflow at first, so the ranks skip those steps together (the overflow flag is part of
the step's one all-reduce) and the scale comes down; then the model trains, and the scale grows
again after windows of clean steps. The overflow pattern zerotrain met (metrics.jsonl's
`skipped`) is fed to deepspeed.runtime.fp16.loss_scaler.DynamicLossScaler (from PyPI, in the test
venv) with the same settings: the scale of every step must be the one DeepSpeed's code gives.
Then: the scale never went under min_loss_scale, and the loss fell.

Usage: loss_scale_parity.py ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tiny_shards import prepare_tiny_shards

STEPS, POWER, WINDOW, HYSTERESIS, MIN_SCALE = 40, 32, 5, 2, 256.0


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def deepspeed_scales(skipped):
    """The scale DeepSpeed's DynamicLossScaler uses at each step of the overflow pattern."""
    import deepspeed.runtime.fp16.loss_scaler as loss_scaler
    loss_scaler.dist.get_rank = lambda: 0  # its overflow log asks for a rank; no process group here
    scaler = loss_scaler.DynamicLossScaler(init_scale=2.0**POWER, scale_window=WINDOW, min_scale=MIN_SCALE,
                                           delayed_shift=HYSTERESIS, consecutive_hysteresis=False,
                                           raise_error_at_min_scale=False)
    scales = []
    for overflow in skipped:
        scales.append(float(scaler.cur_scale))
        scaler.update_scale(overflow)
    return scales


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    zerotrain, mpirun = sys.argv[1], sys.argv[2:]
    source = Path(__file__).resolve().parents[3]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_files = prepare_tiny_shards(zerotrain, work, "line {i}: the quick brown fox jumps over the lazy dog", 400)
        command = [*mpirun, "-np", "2", zerotrain, "train", "--config", source / "configs/default.yaml",
                   "--set", f"data.train_files={train_files}", "--set", "data.val_files=",
                   "--set", f"train.steps={STEPS}", "--set", "train.eval_interval=0", "--set", "train.sample_interval=0",
                   "--set", "checkpoint.interval=0", "--set", f"logging.run_dir={work}/run",
                   "--set", "precision.dtype=fp16", "--set", f"precision.initial_scale_power={POWER}",
                   "--set", f"precision.loss_scale_window={WINDOW}", "--set", f"precision.hysteresis={HYSTERESIS}",
                   "--set", f"precision.min_loss_scale={MIN_SCALE}", "--set", "zero_optimization.stage=2"]
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            print(result.stdout)
            fail(f"zerotrain exited {result.returncode}")
        records = [json.loads(line) for line in (work / "run/metrics.jsonl").read_text().splitlines()]
        records = [r for r in records if "loss_scale" in r]
    if len(records) != STEPS:
        fail(f"{len(records)} step records, expected {STEPS}")
    skipped = [bool(r["skipped"]) for r in records]
    scales = [r["loss_scale"] for r in records]
    print("step  skipped  zerotrain scale  loss")
    for r in records:
        print(f"{r['step']:4}  {int(r['skipped']):7}  {r['loss_scale']:15.0f}  {r['loss']:.4f}")
    if not skipped[0] or not skipped[1]:
        fail("a scale of 2^32 did not overflow the first steps")
    if all(skipped[STEPS // 2:]):
        fail("the run never got past its overflows")
    want = deepspeed_scales(skipped)
    for step, (got, expected) in enumerate(zip(scales, want), 1):
        if got != expected:
            fail(f"step {step}: zerotrain's loss scale is {got:.0f}, DeepSpeed's DynamicLossScaler gives {expected:.0f}")
    if min(scales) < MIN_SCALE:
        fail(f"the scale went down to {min(scales)}, under min_loss_scale {MIN_SCALE}")
    if not any(b > a for a, b in zip(scales, scales[1:])):
        fail("the scale never grew after a window of clean steps")
    clean = [r["loss"] for r in records if not r["skipped"]]
    if not clean[-1] < clean[0] - 0.5:
        fail(f"the loss did not fall over the clean steps: {clean[0]:.3f} -> {clean[-1]:.3f}")
    print(f"PASS: {sum(skipped)} skipped steps, every scale as DeepSpeed's DynamicLossScaler; loss "
          f"{clean[0]:.3f} -> {clean[-1]:.3f}")


if __name__ == "__main__":
    main()
