#!/usr/bin/env python3
"""Step time with overlap_comm on and off, per ZeRO stage, from zerotrain's own per-step metrics.

For each stage it trains the same job twice (overlap on, overlap off) and reports medians over the
measured steps (the first --warmup steps are dropped): step time, communication time on the comm
stream, and the exposed part (time the compute side waited for communication). The hidden fraction
is (T_off - T_on) / T_comm_off: how much of the communication overlap took off the step.

Usage: bench/overlap.py [--ranks 2] [--steps 30] [--warmup 5] [--stages 0,1,2,3]
                        [--launcher "launch/zt-run -n {ranks} --"] [--label cpu-local]
                        [--set KEY=VALUE ...]
The launcher is any command prefix that starts `zerotrain` on the ranks; bench/netns provides
one that runs the ranks on simulated hosts joined by a rate-limited link.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_job(args, stage, overlap, run_dir):
    launcher = shlex.split(args.launcher.format(ranks=args.ranks))
    cmd = launcher + ["train", "--config", args.config,
                      "--set", f"zero_optimization.stage={stage}",
                      "--set", f"zero_optimization.overlap_comm={'true' if overlap else 'false'}",
                      "--set", f"train.steps={args.steps}",
                      "--set", "train.eval_interval=0",
                      "--set", "checkpoint.interval=0",
                      "--set", "logging.log_interval=1000000",
                      "--set", f"logging.run_dir={run_dir}"]
    for kv in args.set:
        cmd += ["--set", kv]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"overlap: job failed ({' '.join(cmd)}):\n{result.stdout}\n{result.stderr}")
    steps = [json.loads(line) for line in (Path(run_dir) / "metrics.jsonl").read_text().splitlines()]
    steps = [s for s in steps if "step_ms" in s][args.warmup:]
    return {key: statistics.median(s[key] for s in steps) for key in ("step_ms", "comm_ms", "exposed_comm_ms")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/default.yaml")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--stages", default="0,1,2,3")
    parser.add_argument("--launcher", default="launch/zt-run -n {ranks} --")
    parser.add_argument("--label", default="cpu-local")
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--output", help="results file (default bench/results/overlap_<label>.md)")
    args = parser.parse_args()

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory(prefix="zt-overlap-") as tmp:
        for stage in [int(s) for s in args.stages.split(",")]:
            on = run_job(args, stage, True, os.path.join(tmp, f"s{stage}-on"))
            off = run_job(args, stage, False, os.path.join(tmp, f"s{stage}-off"))
            comm = off["comm_ms"]
            hidden = (off["step_ms"] - on["step_ms"]) / comm if comm > 0 else float("nan")
            rows.append((stage, on, off, hidden))

    lines = [f"# overlap_comm on vs off ({args.label})", "",
             f"commit {commit}; {args.ranks} ranks; launcher `{args.launcher.format(ranks=args.ranks)}`; "
             f"config {args.config} {' '.join('--set ' + s for s in args.set)}; "
             f"{args.steps} steps, medians of the last {args.steps - args.warmup}; {os.cpu_count()} cores", "",
             "| stage | step ms (on) | step ms (off) | comm ms | exposed ms (on) | exposed ms (off) | hidden |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for stage, on, off, hidden in rows:
        lines.append(f"| {stage} | {on['step_ms']:.1f} | {off['step_ms']:.1f} | {off['comm_ms']:.1f} | "
                     f"{on['exposed_comm_ms']:.1f} | {off['exposed_comm_ms']:.1f} | {hidden:.0%} |")
    text = "\n".join(lines) + "\n"
    print(text)
    output = Path(args.output) if args.output else ROOT / "bench" / "results" / f"overlap_{args.label}.md"
    output.write_text(text)


if __name__ == "__main__":
    main()
