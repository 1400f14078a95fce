#!/usr/bin/env python3
"""The emulated accelerator in a real 2-rank job under mpirun (bench/perf_emulated.py's instrument).

A bf16 run on the CPU and the same run on the emulated device must allocate the same buffers
(params, gradients, optimizer state, buckets and activations: metrics.jsonl's memory figures are
equal byte for byte), the emulated run must compute nothing (its loss stays 0), every step's compute
time (the step less its wait for communication) must be at least `zerotrain plan --predict`'s
T_compute for the job, which is the same time model the device waits out, and not wildly more,
and overlap on and off must both run.

Usage: emulated_device_run.py ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tiny_shards import prepare_tiny_shards

MEMORY = ("mem_params", "mem_grads", "mem_optimizer", "mem_buckets", "mem_activations")
# 0.001 TFLOP/s x MFU 0.4: the default config's tiny GPT-2 takes about half a second per micro batch.
EMULATED = ["emulation.tflops=0.001", "emulation.mfu=0.4", "emulation.memory_gbps=1"]


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    zerotrain, mpirun = sys.argv[1], sys.argv[2:]
    source = Path(__file__).resolve().parents[3]
    common = ["precision.dtype=bf16", "zero_optimization.stage=2", "train.eval_interval=0", "train.sample_interval=0",
              "checkpoint.interval=0", "train.steps=3"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_files = prepare_tiny_shards(zerotrain, work, "line {i}: emulated devices wait instead of computing", 300)
        data = [f"data.train_files={train_files}", "data.val_files="]

        def train(name, sets):
            cmd = [*mpirun, "-np", "2", zerotrain, "train", "--config", source / "configs/default.yaml"]
            for kv in common + data + sets + [f"logging.run_dir={work / name}"]:
                cmd += ["--set", kv]
            result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
            if result.returncode != 0:
                fail(f"{name} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
            rows = [json.loads(line) for line in (work / name / "metrics.jsonl").read_text().splitlines()]
            return [r for r in rows if "step_ms" in r], result.stdout + result.stderr

        cpu, _ = train("cpu", [])
        emulated, log = train("emulated", EMULATED)
        emulated_off, _ = train("emulated-off", EMULATED + ["zero_optimization.overlap_comm=false"])
        if "emulated device" not in log:
            fail("the emulated run does not say it runs on the emulated device")
        for key in MEMORY:
            if cpu[-1][key] != emulated[-1][key]:
                fail(f"{key}: the CPU run allocated {cpu[-1][key]} bytes, the emulated run {emulated[-1][key]}")
        if any(r["loss"] != 0.0 for r in emulated + emulated_off):
            fail(f"the emulated device computed a loss: {[r['loss'] for r in emulated]}")

        plan = [zerotrain, "plan", "--config", source / "configs/default.yaml", "--world-size", "2", "--predict",
                "--link-gbps", "10"]
        for kv in common + EMULATED:
            plan += ["--set", kv]
        result = subprocess.run([str(c) for c in plan], capture_output=True, text=True)
        rows = [cols for cols in (line.split() for line in result.stdout.splitlines()) if len(cols) == 7 and cols[0] == "2"]
        if result.returncode != 0 or not rows:
            fail(f"plan --predict gave no stage-2 row:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
        row = rows[0]
        t_compute = float(row[2])
        print(f"predicted T_compute {t_compute} ms; measured compute_ms "
              f"{[round(r['compute_ms'], 1) for r in emulated + emulated_off]}")
        for r in emulated + emulated_off:
            # The prediction prints 0.1 ms; the device's waits never end early; and the CPU work
            # around them (a tiny model's) stays far under the waits.
            if not t_compute - 0.1 <= r["compute_ms"] <= 2.0 * t_compute:
                fail(f"step {r['step']}: compute {r['compute_ms']:.1f} ms against the modelled {t_compute} ms")
    print("PASS")


if __name__ == "__main__":
    main()
