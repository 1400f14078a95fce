#!/usr/bin/env python3
"""Measured per-rank memory of zerotrain by category, ZeRO stages 0-3 x world sizes 1, 2, 4,
held against the ZeRO formulas of DESIGN.md and against `zerotrain plan`.

For every (model, stage, world size) it trains --steps steps and reads:
  * model states (params, grads, optimizer): the exact bytes charged to each category, from
    metrics.jsonl (mem_<category>, rank 0, after the last step; they are allocated once);
  * overheads: buckets, gathered (ZeRO-3 gathered parameters), activations, workspace, comm_staging — current
    bytes from metrics.jsonl and their peaks from the run's "memory at the end (current, peak)"
    line; mem_peak (all categories together, exact).
It then computes, independently in Python from the model's block sizes and zero/partition.cpp's
rules (blocks padded to a multiple of the world size, buckets filled in backward order):
  * "formula": DESIGN.md's table for compute dtype size c (4 bytes: fp32 on CPU) and the fp32
    gradient shard the engine keeps — params cPsi (stage 3: cPsi/N), grads cPsi + 4Psi/N (stages 0/1:
    compute-dtype block gradients + fp32 reduced shard; stage 0 shards over 1) or 4Psi/N (stages 2/3),
    optimizer 12Psi/N (stage 0: 12Psi) — with Psi the parameter count, no padding;
  * "exact": the same with padding, which the measurement must equal to the byte;
and checks that `zerotrain plan --world-size N` prints these exact values (it prints KiB/MiB with
two decimals; the check formats the exact bytes the same way and compares the strings).

  bench/perf_memory.py [--models tiny,small] [--worlds 1,2,4]
Writes bench/results/perf_memory.md.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import perf_common as pc


def block_numels(m, vocab=256):
    C, L = m["n_embd"], m["n_layer"]
    return [vocab * C + m["block_size"] * C] + [12 * C * C + 13 * C] * L + [2 * C]


def format_bytes(b):  # core/memory.cpp format_bytes
    if -1024 < b < 1024:
        return f"{b} B"
    units, v, u = ["KiB", "MiB", "GiB", "TiB"], float(b), -1
    while abs(v) >= 1024.0 and u < 3:
        v /= 1024.0
        u += 1
    return f"{v:.2f} {units[u]}"


def exact_plan(numels, stage, world, bucket_numel, c=4, comm=4):
    n = 1 if stage == 0 else world
    unit = n * (64 if n > 1 else 1)  # chunks of whole 64-element units (zero/partition.h, kChunkAlignment)
    padded = [(x + unit - 1) // unit * unit for x in numels]
    chunks = [p // n for p in padded]
    shard, total, padded_total = sum(chunks), sum(numels), sum(padded)
    cap = max(unit // n, bucket_numel // n // (unit // n) * (unit // n))  # a bucket's range per rank, aligned
    buckets = []  # rank chunk numel of each bucket, walking blocks backward
    for i in reversed(range(len(numels))):
        if not buckets or buckets[-1] + chunks[i] > cap:
            buckets.append(0)
        buckets[-1] += chunks[i]
    return {"params": c * (padded_total if stage < 3 else shard),
            "grads": 4 * shard + (c * total if stage < 2 else 0),
            "optimizer": 12 * shard,
            "buckets": min(2, len(buckets)) * max(buckets) * n * comm,
            "padding": padded_total - total}


def formula(psi, stage, world, c=4):
    n = 1 if stage == 0 else world
    return {"params": c * psi / (world if stage == 3 else 1),
            "grads": (c * psi if stage < 2 else 0) + 4 * psi / n,
            "optimizer": 12 * psi / n}


def plan_table(sets, world):
    out = subprocess.run([pc.zerotrain_bin(), "plan", "--config", "configs/default.yaml", "--world-size", str(world),
                          *sum((["--set", s] for s in sets), [])], cwd=pc.ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"zerotrain plan failed:\n{out.stderr}")
    rows = {}
    for line in out.stdout.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] in ("0", "1", "2", "3"):
            rows[int(cells[0])] = dict(zip(["params", "grads", "optimizer", "model_state", "buckets", "activations",
                                            "gathered", "padding"], cells[1:]))
    return rows


def end_peaks(log):
    """{category: peak string} from 'memory at the end (current, peak): params 1.00 MiB (peak 1.00 MiB), ...'."""
    m = re.search(r"memory at the end \(current, peak\): (.*)", log)
    if not m:
        return {}
    return {cat: peak for cat, _, peak in re.findall(r"(\w+) ([\d.]+ \w+) \(peak ([\d.]+ \w+)\)", m.group(1))}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="tiny,small")
    parser.add_argument("--worlds", default="1,2,4")
    parser.add_argument("--stages", default="0,1,2,3")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--output")
    args = parser.parse_args()
    loads = [pc.load_average()]
    lines = pc.header("Per-rank memory by category: measured vs ZeRO formulas vs `zerotrain plan`", [
        "runs: ranks on this machine (launch/zt-run), fp32 on CPU (compute dtype c = 4 bytes; the DESIGN.md table's "
        "bf16 instance, 2 bytes, needs a GPU), configs/default.yaml (reduce_bucket_size 25000 elements) "
        f"{' '.join(args.set)}; {args.steps} steps; measured = rank 0",
        "model state: params + grads + optimizer. Psi = parameters; exact = the formula with the padding that cuts "
        "every block into N chunks of whole 64-element units (one chunk at stage 0); plan = `zerotrain plan` (printed rounded to 0.01 KiB/MiB; 'ok' = it prints the "
        "exact value)"])
    ok_all = True
    with tempfile.TemporaryDirectory(prefix="zt-perf-mem-") as tmp:
        for model in args.models.split(","):
            m = pc.MODELS[model]
            numels = block_numels(m)
            psi = sum(numels)
            bucket_numel = 25000
            for kv in args.set:
                if kv.startswith("zero_optimization.reduce_bucket_size="):
                    bucket_numel = int(float(kv.split("=")[1]))
            lines += ["", f"## {model} (Psi = {psi} parameters, {m})", "",
                      "| stage | N | params | grads | optimizer | model state measured (B) | = exact | formula (B) "
                      "| padding elems | plan | buckets (B) | gathered peak | activations (B) | workspace peak | "
                      "comm_staging (B) | mem_peak (B) |", "| " + " | ".join(["---"] * 16) + " |"]
            for world in [int(w) for w in args.worlds.split(",")]:
                plan = plan_table(pc.model_sets(model) + args.set, world)
                for stage in [int(s) for s in args.stages.split(",")]:
                    run_dir = os.path.join(tmp, f"{model}-{stage}-{world}")
                    records, log = pc.run_zerotrain(pc.launcher_prefix(world), pc.model_sets(model) + [
                        f"zero_optimization.stage={stage}"] + args.set, args.steps, run_dir)
                    last = records[-1]
                    peaks = end_peaks(log)
                    measured = {k: last[f"mem_{k}"] for k in ("params", "grads", "optimizer")}
                    ms = sum(measured.values())
                    ex = exact_plan(numels, stage, world, bucket_numel)
                    ex_ms = ex["params"] + ex["grads"] + ex["optimizer"]
                    fo = formula(psi, stage, world)
                    fo_ms = sum(fo.values())
                    exact_ok = all(measured[k] == ex[k] for k in measured) and last["mem_buckets"] == ex["buckets"]
                    p = plan.get(stage, {})
                    plan_ok = (p.get("params") == format_bytes(ex["params"]) and
                               p.get("grads") == format_bytes(ex["grads"]) and
                               p.get("optimizer") == format_bytes(ex["optimizer"]) and
                               p.get("model_state") == format_bytes(ex_ms))
                    ok_all &= exact_ok and plan_ok
                    lines.append(
                        f"| {stage} | {world} | {measured['params']} | {measured['grads']} | {measured['optimizer']} | "
                        f"{ms} | {'yes' if exact_ok else 'NO (exact ' + str(ex_ms) + ')'} | {fo_ms:.0f} "
                        f"({fo_ms / psi:.2f} B/param) | {ex['padding']} | "
                        f"{p.get('model_state', '?')} {'ok' if plan_ok else 'MISMATCH'} | {last['mem_buckets']} | "
                        f"{peaks.get('gathered', '0')} (plan <= {p.get('gathered', '-')}) | {last['mem_activations']} | "
                        f"{peaks.get('workspace', '0')} | {last.get('mem_comm_staging', 0)} | {last['mem_peak']} |")
                    print(lines[-1], file=sys.stderr)
            loads.append(pc.load_average())
    lines += ["", f"All measured model states equal the exact formula and `zerotrain plan`: "
              f"{'yes' if ok_all else 'NO — see the rows marked NO / MISMATCH'}.",
              f"Load averages (1/5/15) at the start and after each model: {'; '.join(loads)}"]
    pc.write_results(args.output or pc.ROOT / "bench" / "results" / "perf_memory.md", lines)


if __name__ == "__main__":
    main()
