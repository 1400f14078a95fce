#!/usr/bin/env python3
"""Where one CPU training step's time goes, per op: perf samples of a single-rank zerotrain run.

Runs `zerotrain train` on one rank under `perf record` (call graphs unwound with DWARF, so the time
OpenBLAS spends inside a product is charged to the layer that called it), then reads the inclusive
share of every CPU layer entry point (zt::models::cpu::*), AdamW and the BLAS as a whole from
`perf report --children`, and turns shares into milliseconds with the run's median step time.
Shares are of the samples inside zt::Trainer::step (start-up is left out); ms = that share x the
mean step time of the run (the first steps included, as they are in the samples).

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
# gelu_forward / gelu_backward are the unfused kernels of binaries before bias_gelu_forward and
# gelu_bias_backward; residual_layernorm_forward is a residual add and a layernorm_forward in one.
OPS = ["embedding_forward", "layernorm_forward", "residual_layernorm_forward", "linear_forward",
       "attention_forward", "gelu_forward", "bias_gelu_forward", "residual_forward", "softmax_xent_forward",
       "softmax_xent_backward", "linear_backward", "gelu_backward", "gelu_bias_backward", "attention_backward",
       "layernorm_backward", "embedding_backward", "adamw_step_host"]

ALIASES = {"gelu_forward": ["zt::models::cpu::gelu_forward_range"],
           "gelu_backward": ["zt::models::cpu::gelu_backward_range"],
           "bias_gelu_forward": ["zt::models::cpu::bias_gelu_rows"],
           "gelu_bias_backward": ["zt::models::cpu::gelu_bias_backward_rows"],
           "residual_layernorm_forward": ["zt::models::cpu::residual_layernorm_rows"],
           "layernorm_forward": ["zt::models::cpu::layernorm_forward_rows"],
           "layernorm_backward": ["zt::models::cpu::layernorm_backward_rows"],
           "softmax_xent_forward": ["zt::models::cpu::forward_rows"],
           "softmax_xent_backward": ["zt::models::cpu::backward_rows"],
           "adamw_step_host": ["zt::adamw_range", "zt::adamw_reference_range"]}


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
        name = re.split(r"\s{2,}", symbol.strip())[0].replace("(anonymous namespace)::", "").split("(")[0]
        name = re.sub(r"\.(default|avx2|avx512f|resolver)$", "", name)
        for op in OPS:
            # the entry point, the reference it forwards to and the range kernels it calls (tail
            # calls leave the entry point off the stack)
            if name in (f"zt::models::cpu::{op}", f"zt::{op}", f"zt::models::cpu::reference::{op}") or \
                    name in ALIASES.get(op, ()):
                shares[op] = max(shares.get(op, 0.0), children)
        if name == "zt::Trainer::step":
            shares["step"] = max(shares.get("step", 0.0), children)
    step_share = shares.pop("step", 0.0) or 100.0
    mean_ms = statistics.mean(r["step_ms"] for r in records)
    blas = sum(float(m.group(1)) for m in re.finditer(r"^\s*([\d.]+)%\s+\S*libopenblas\S*", dso_report, re.M))
    total = sum(v for k, v in shares.items() if k != "step")
    lines = pc.header(f"CPU step profile: {args.model}, {args.label}", [
        f"model {args.model} = {pc.MODELS[args.model]}; 1 rank, train.cpu_threads={args.threads}; "
        f"extra settings: {' '.join(args.set) or 'none'}",
        f"perf record -F {args.freq} --call-graph dwarf over {args.steps} steps; load average before: {load}",
        f"median step {step_ms:.1f} ms (steps after the first {args.warmup})"
        + (f"; MFU {100 * mfu:.0f}% of the measured sgemm rate" if mfu else ""),
        "shares are of the samples inside training steps and inclusive (a layer's products are in its row); "
        f"ms = share x the mean step time over all {args.steps} steps ({mean_ms:.1f} ms)"])
    lines += ["", "| op | share of samples | ms per step |", "| --- | --- | --- |"]
    def row(name, share):
        pct = 100.0 * share / step_share
        lines.append(f"| {name} | {pct:.1f} % | {pct / 100 * mean_ms:.1f} |")
    for op in OPS:
        if op in shares:
            row(op, shares[op])
    row("(sum of the ops above)", total)
    row("rest of the step (engine: gradient copies, bucketing, clipping, comm bookkeeping)", step_share - total)
    row("inside OpenBLAS (all products, whoever called them)", blas)
    pc.write_results(ROOT / "bench" / "results" / f"cpu_profile_{args.model}_{args.label}.md", lines)


if __name__ == "__main__":
    main()
