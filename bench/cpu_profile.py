#!/usr/bin/env python3
"""Where one CPU training step's time goes, per op: perf samples of a single-rank zerotrain run.

Runs `zerotrain train` on one rank under `perf record` (call graphs unwound with DWARF, so the time
OpenBLAS spends inside a product is charged to the layer that called it), then reads the inclusive
share of every CPU layer entry point (zt::models::cpu::*), AdamW and the BLAS as a whole from
`perf report --children`, and turns shares into milliseconds with the run's median step time.
Steps before --warmup are included in the samples (perf cannot cut them out); they are few.

  bench/cpu_profile.py --model small --label after
  bench/cpu_profile.py --model small --label before --set train.cpu_reference_kernels=true
Writes bench/results/cpu_profile_<model>_<label>.md.
"""
import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import perf_common as pc

ROOT = pc.ROOT

# Entry points reported, in the order of a step. Inclusive shares: a layer's row includes the BLAS
# products it calls; the BLAS row is all time inside libopenblas whoever called it.
OPS = ["embedding_forward", "layernorm_forward", "linear_forward", "attention_forward", "gelu_forward",
       "residual_forward", "softmax_xent_forward", "softmax_xent_backward", "linear_backward", "gelu_backward",
       "attention_backward", "layernorm_backward", "embedding_backward", "adamw_step_host"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="small", choices=sorted(pc.MODELS))
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="train.cpu_threads of the profiled rank")
    parser.add_argument("--freq", type=int, default=400, help="perf samples per second")
    parser.add_argument("--set", action="append", default=[], help="extra zerotrain KEY=VALUE")
    parser.add_argument("--label", required=True)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="zt-cpu-profile-") as tmp:
        data = Path(tmp) / "perf.data"
        prefix = ["perf", "record", "-F", str(args.freq), "--call-graph", "dwarf,32768", "-q", "-o", str(data), "--",
                  pc.zerotrain_bin()]
        load = pc.load_average()
        records, _ = pc.run_zerotrain(prefix, pc.model_sets(args.model) + [
            f"train.cpu_threads={args.threads}"] + args.set, args.steps, str(Path(tmp) / "run"))
        step_ms = statistics.median(r["step_ms"] for r in records[args.warmup:])
        mfu = statistics.median(r["mfu"] for r in records[args.warmup:]) if "mfu" in records[0] else None
        report = subprocess.run(["perf", "report", "-i", str(data), "--children", "--sort", "dso,symbol", "--stdio",
                                 "-g", "none", "--percent-limit", "0.01"], capture_output=True, text=True).stdout
        dso_report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "dso", "--stdio",
                                     "-g", "none"], capture_output=True, text=True).stdout
    shares = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+\[\.\]\s+(.*)$", line)
        if not m:
            continue
        children, symbol = float(m.group(1)), m.group(4)
        for op in OPS:
            if re.search(rf"\b(zt::models::cpu::|zt::){op}\(", symbol) and "reference::" not in symbol:
                shares[op] = max(shares.get(op, 0.0), children)
    blas = sum(float(m.group(1)) for m in re.finditer(r"^\s*([\d.]+)%\s+\S*libopenblas\S*", dso_report, re.M))
    total = sum(shares.values())
    lines = pc.header(f"CPU step profile: {args.model}, {args.label}", [
        f"model {args.model} = {pc.MODELS[args.model]}; 1 rank, train.cpu_threads={args.threads}; "
        f"extra settings: {' '.join(args.set) or 'none'}",
        f"perf record -F {args.freq} --call-graph dwarf over {args.steps} steps; load average before: {load}",
        f"median step {step_ms:.1f} ms (steps after the first {args.warmup})"
        + (f"; MFU {100 * mfu:.0f}% of the measured sgemm rate" if mfu else ""),
        "shares are inclusive (a layer's products are in its row); ms = share x median step time"])
    lines += ["", "| op | share of samples | ms per step |", "| --- | --- | --- |"]
    for op in OPS:
        if op in shares:
            lines.append(f"| {op} | {shares[op]:.1f} % | {shares[op] / 100 * step_ms:.1f} |")
    lines.append(f"| (sum of the ops above) | {total:.1f} % | {total / 100 * step_ms:.1f} |")
    lines.append(f"| of which inside OpenBLAS (all products) | {blas:.1f} % | {blas / 100 * step_ms:.1f} |")
    pc.write_results(ROOT / "bench" / "results" / f"cpu_profile_{args.model}_{args.label}.md", lines)


if __name__ == "__main__":
    main()
