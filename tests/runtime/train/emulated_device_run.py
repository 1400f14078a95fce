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
import subprocess
import tempfile
from pathlib import Path

from tiny_shards import prepare_tiny_shards
from train_job import SLOW_EMULATED_DEVICE, arguments, fail, train_two_ranks

MEMORY = ("mem_params", "mem_grads", "mem_optimizer", "mem_buckets", "mem_activations")
EMULATED = SLOW_EMULATED_DEVICE


def main():
    zerotrain, mpirun, source = arguments(__doc__)
    common = ["precision.dtype=bf16", "zero_optimization.stage=2", "train.eval_interval=0", "train.sample_interval=0",
              "checkpoint.interval=0", "train.steps=3"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_files = prepare_tiny_shards(zerotrain, work, "line {i}: emulated devices wait instead of computing", 300)
        data = [f"data.train_files={train_files}", "data.val_files="]

        def train(name, sets):
            return train_two_ranks(zerotrain, mpirun, source / "configs/default.yaml", common + data + sets, work / name)

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
