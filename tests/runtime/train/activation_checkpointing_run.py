#!/usr/bin/env python3
"""train.activation_checkpointing in real 2-rank jobs under mpirun.

GPT-2 (configs/default.yaml) and Llama (configs/llama-tiny.yaml) at ZeRO stages 0 and 3, with
gradient accumulation: every step's loss and gradient norm are bit for bit those of the run
without it, the run allocates fewer activation bytes, and its start says how many blocks it
recomputes; a traced step shows each recompute as a span before that block's backward. On the
emulated device the recompute takes the device's forward time again: each step's compute time is
at least what `zerotrain plan --predict` gives for the job with checkpointing, which is above the
prediction without it.

Usage: activation_checkpointing_run.py ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import subprocess
import tempfile
from pathlib import Path

from tiny_shards import prepare_tiny_shards
from train_job import SLOW_EMULATED_DEVICE, arguments, fail, train_two_ranks

EMULATED = SLOW_EMULATED_DEVICE


def main():
    zerotrain, mpirun, source = arguments(__doc__)
    common = ["train.eval_interval=0", "train.sample_interval=0", "checkpoint.interval=0", "train.steps=4",
              "train.gradient_accumulation_steps=2"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_files = prepare_tiny_shards(zerotrain, work, "line {i}: a block's forward runs twice", 300)
        data = [f"data.train_files={train_files}", "data.val_files="]

        def train(name, config, sets, extra=()):
            return train_two_ranks(zerotrain, mpirun, source / "configs" / config, common + data + sets, work / name,
                                   extra)

        # Blocks: the embedding, the layers, the head (Llama: final norm and LM head in one).
        for config, layers, blocks in (("default.yaml", 2, 4), ("llama-tiny.yaml", 4, 6)):
            for stage in (0, 3):
                what = f"{config} stage {stage}"
                sets = [f"zero_optimization.stage={stage}"]
                kept, _ = train(f"kept-{config}-{stage}", config, sets)
                recomputed, log = train(f"recomputed-{config}-{stage}", config,
                                        sets + ["train.activation_checkpointing=1"], ["--trace", "2"])
                for key in ("loss", "grad_norm"):
                    if [r[key] for r in kept] != [r[key] for r in recomputed]:
                        fail(f"{what}: {key} differs with activation checkpointing:\n"
                             f"{[r[key] for r in kept]}\n{[r[key] for r in recomputed]}")
                if not recomputed[-1]["mem_activations"] < kept[-1]["mem_activations"]:
                    fail(f"{what}: activations {recomputed[-1]['mem_activations']} with checkpointing, "
                         f"{kept[-1]['mem_activations']} without")
                if f"activation checkpointing recomputes {layers} of {blocks} blocks: activations" not in log:
                    fail(f"{what}: the run does not say what it recomputes:\n{log[-2000:]}")
                trace = json.loads((work / f"recomputed-{config}-{stage}" / "trace" / "rank0.json").read_text())
                names = [e["name"] for e in sorted(trace["traceEvents"], key=lambda e: e.get("ts", 0))
                         if e.get("ph") == "X" and e.get("tid") == trace_compute_lane(trace)]
                recomputes = [i for i, n in enumerate(names) if n.startswith("recompute ")]
                # Two micro batches, every layer recomputed in each; every recompute is followed by its backward.
                if len(recomputes) != 2 * layers or any(names[i + 1] != "backward " + names[i][len("recompute "):]
                                               for i in recomputes):
                    fail(f"{what}: the traced step's compute lane is {names}")
                print(f"{what}: losses equal, activations {recomputed[-1]['mem_activations']} "
                      f"< {kept[-1]['mem_activations']} bytes")

        # The emulated device waits out the recompute too, as plan --predict counts it.
        def predicted_compute_ms(sets):
            plan = [zerotrain, "plan", "--config", source / "configs/default.yaml", "--world-size", "2", "--predict",
                    "--link-gbps", "10"]
            for kv in common + EMULATED + sets:
                plan += ["--set", kv]
            result = subprocess.run([str(c) for c in plan], capture_output=True, text=True)
            rows = [c for c in (line.split() for line in result.stdout.splitlines()) if len(c) == 7 and c[0] == "2"]
            if result.returncode != 0 or not rows:
                fail(f"plan --predict gave no stage-2 row:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
            return float(rows[0][2])

        sets = ["zero_optimization.stage=2", "precision.dtype=bf16", "train.activation_checkpointing=1"]
        with_recompute = predicted_compute_ms(sets)
        without = predicted_compute_ms(sets[:-1])
        if not with_recompute > without:
            fail(f"plan --predict: T_compute {with_recompute} ms with recompute, {without} ms without")
        emulated, _ = train("emulated", "default.yaml", sets + EMULATED)
        for r in emulated:
            if not with_recompute - 0.1 <= r["compute_ms"] <= 2.0 * with_recompute:
                fail(f"emulated step {r['step']}: compute {r['compute_ms']:.1f} ms against the modelled "
                     f"{with_recompute} ms (without recompute: {without} ms)")
        print(f"emulated: T_compute {with_recompute} ms predicted with recompute ({without} without); measured "
              f"{[round(r['compute_ms'], 1) for r in emulated]}")


def trace_compute_lane(trace):
    """The tid of the compute lane (named in the trace's thread_name metadata)."""
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"]["name"] == "compute stream":
            return e["tid"]
    fail(f"no compute lane in the trace: {[e for e in trace['traceEvents'] if e.get('ph') == 'M']}")


if __name__ == "__main__":
    main()
