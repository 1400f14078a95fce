#!/usr/bin/env python3
"""Two zerotrain binaries (A, B) on the same job, interleaved round by round: is B faster? Or one
binary under two settings (--set-a / --set-b, e.g. precision.dtype=fp32 against bf16).

For each round and each stage it runs A then B (overlap_comm on) on the same launcher and records
the median step time, exposed communication and comm time of each; the table gives medians over
rounds and the median of the per-round ratios B/A, which cancels most of a shared machine's drift.

  bench/perf_ab.py --a build-perf-base/zerotrain --b build-perf-fix/zerotrain --stages 1,2 --rate 200mbit
  bench/perf_ab.py --a build/zerotrain --b build/zerotrain --set-b precision.dtype=bf16 --rate local
  bench/perf_ab.py --a A/zerotrain --b B/zerotrain --model emulated-gpt2 --ranks 4 --hosts 2 --rate 2gbit \
      --host-cpus none --stages 2       # perf_emulated.py's job: GPT-2 124M on the emulated accelerator
Writes bench/results/perf_ab_<label>.md.
"""
import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import perf_common as pc
import perf_emulated


def job_sets(model):
    if model != "emulated-gpt2":
        return pc.model_sets(model)
    defaults = argparse.Namespace(seq=1024, micro_batch=1, scale=1000.0, mfu=0.4, set=[])
    return perf_emulated.job_sets(defaults)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--model", default="small", help=f"one of {', '.join(pc.MODELS)} or emulated-gpt2")
    ap.add_argument("--stages", default="1,2")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--hosts", type=int, help="simulated hosts the ranks are placed on, host by host (default: one "
                    "per rank)")
    ap.add_argument("--rate", default="200mbit")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--set-a", action="append", default=[], help="a setting for A's runs only")
    ap.add_argument("--set-b", action="append", default=[], help="a setting for B's runs only")
    ap.add_argument("--host-cpus", default="auto",
                    help="with --rate R: CPUs of the simulated hosts (netns-hosts.sh up --host-cpus; auto = host I "
                    "on CPU I, none = shared)")
    ap.add_argument("--label", default="ab")
    ap.add_argument("--output")
    args = ap.parse_args()
    bins = {"A": str(Path(args.a).resolve()), "B": str(Path(args.b).resolve())}
    hosts = args.hosts or args.ranks
    if args.ranks % hosts:
        sys.exit(f"--hosts {hosts}: the {args.ranks} ranks must divide evenly among the hosts")
    pinned = args.rate != "local" and args.host_cpus != "none"
    netns = None if args.rate == "local" else pc.Netns(hosts, args.rate,
                                                       ["--host-cpus", args.host_cpus] if pinned else [])
    prefix = pc.launcher_prefix(args.ranks, netns, ppn=args.ranks // hosts)
    stages = [int(s) for s in args.stages.split(",")]
    res = {(s, k): [] for s in stages for k in bins}
    loads = [pc.load_average()]
    try:
        with tempfile.TemporaryDirectory(prefix="zt-perf-ab-") as tmp:
            for rep in range(args.repeats):
                loads.append(pc.load_average())
                for s in stages:
                    for k, b in bins.items():
                        os.environ["ZT_BIN"] = b
                        own = args.set_a if k == "A" else args.set_b
                        recs, _ = pc.run_zerotrain(prefix, job_sets(args.model) + [
                            f"zero_optimization.stage={s}"] + args.set + own, args.steps,
                            os.path.join(tmp, f"{s}{k}{rep}"))
                        res[(s, k)].append(pc.medians(recs, args.warmup))
                        print(f"stage {s} {k} round {rep}: {res[(s, k)][-1]['step_ms']:.1f} ms, exposed "
                              f"{res[(s, k)][-1]['exposed_comm_ms']:.1f}", file=sys.stderr)
    finally:
        if netns:
            netns.down()
    commits = {}
    for k, b in bins.items():
        marker = Path(b).parent / "SOURCE_COMMIT"
        commits[k] = marker.read_text().strip() if marker.exists() else b
    os.environ["ZT_BIN"] = bins["A"]
    lines = pc.header(f"A/B: {args.label}", [
        f"A = {bins['A']}: {commits['A']}" + (f", with {' '.join(args.set_a)}" if args.set_a else ""),
        f"B = {bins['B']}: {commits['B']}" + (f", with {' '.join(args.set_b)}" if args.set_b else ""),
        f"model {args.model} = {' '.join(job_sets(args.model))}" +
        (f", then (later settings win) {' '.join(args.set)}" if args.set else "") + "; network: " +
        ("this machine" if netns is None else f"{args.ranks} ranks on {hosts} simulated hosts, tc tbf {args.rate}, "
         + (f"host CPUs {args.host_cpus} (netns-hosts.sh --host-cpus)" if pinned else "hosts share all CPUs")),
        f"{args.steps} steps per run, medians after {args.warmup}; {args.repeats} rounds, A and B alternating",
        f"load averages (1 min) before each round: {', '.join(l.split()[0] for l in loads)}"])
    lines += ["", "| stage | A step ms | B step ms | B/A (median of per-round ratios) | A exposed ms | B exposed ms | "
              "A comm ms | B comm ms | A comm thread CPU ms | B comm thread CPU ms | A compute ms | B compute ms |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    med = statistics.median
    for s in stages:
        a, b = res[(s, "A")], res[(s, "B")]
        ratio = med(y["step_ms"] / x["step_ms"] for x, y in zip(a, b))
        lines.append(f"| {s} | {med(x['step_ms'] for x in a):.1f} | {med(x['step_ms'] for x in b):.1f} | {ratio:.3f} | "
                     f"{med(x['exposed_comm_ms'] for x in a):.1f} | {med(x['exposed_comm_ms'] for x in b):.1f} | "
                     f"{med(x['comm_ms'] for x in a):.1f} | {med(x['comm_ms'] for x in b):.1f} | "
                     f"{med(x.get('comm_cpu_ms', float('nan')) for x in a):.1f} | "
                     f"{med(x.get('comm_cpu_ms', float('nan')) for x in b):.1f} | "
                     f"{med(x.get('compute_ms', float('nan')) for x in a):.1f} | "
                     f"{med(x.get('compute_ms', float('nan')) for x in b):.1f} |")
    pc.write_results(args.output or pc.ROOT / "bench" / "results" / f"perf_ab_{args.label}.md", lines)


if __name__ == "__main__":
    main()
