#!/usr/bin/env python3
"""The overlap benchmark (bench/perf_overlap.py) swept over zero_optimization.reduce_bucket_size.

For one model and stage (default: small, stage 2) on the same simulated 2-node network it measures,
for each bucket size (elements), T_off, T_on, T_comm, exposed communication and the hidden
fraction, plus the number of buckets the plan makes (zero/partition.cpp: blocks fill buckets in
backward order; a block larger than the bucket gets a bucket of its own). T_compute is measured
once (it does not depend on buckets).

  bench/perf_buckets.py [--model small] [--stage 2] [--sizes 25000,100000,...] [--rate 100mbit]
Writes bench/results/perf_buckets_<label>.md.
"""
import argparse
import statistics
import sys
import tempfile

import perf_common as pc
import perf_memory
import perf_overlap


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="small")
    parser.add_argument("--stage", type=int, default=2)
    parser.add_argument("--sizes", default="25000,100000,250000,800000,2000000,6553600,500000000")
    perf_overlap.common_args(parser)
    args = parser.parse_args()
    label = args.label or f"{args.model}_s{args.stage}_{args.rate}"
    netns = None if args.rate == "local" else pc.Netns(args.ranks, args.rate)
    prefix = pc.launcher_prefix(args.ranks, netns)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    numels = perf_memory.block_numels(pc.MODELS[args.model])
    loads = [pc.load_average()]
    rounds = {s: [] for s in sizes}
    computes = []
    try:
        with tempfile.TemporaryDirectory(prefix="zt-perf-buckets-") as tmp:
            for rep in range(args.repeats):
                if args.quiet_load:
                    pc.wait_for_quiet(args.quiet_load, 120)
                loads.append(pc.load_average())
                computes.append(perf_overlap.measure_compute(args, args.model, args.stage, args.set, tmp, f"c{rep}"))
                for size in sizes:
                    sets = [f"zero_optimization.reduce_bucket_size={size}"] + args.set
                    rounds[size].append(perf_overlap.measure_config(args, args.model, args.stage, sets, prefix, tmp,
                                                                    f"b{size}-r{rep}"))
                    r = rounds[size][-1]
                    print(f"bucket {size} round {rep}: off {r[False]['step_ms']:.1f} on {r[True]['step_ms']:.1f} "
                          f"comm {r[False]['comm_ms']:.1f} exposed {r[True]['exposed_comm_ms']:.1f} "
                          f"(load {loads[-1]})", file=sys.stderr)
    finally:
        if netns:
            netns.down()

    def n_buckets(size):
        n, chunks, buckets = args.ranks if args.stage > 0 else 1, None, []
        chunks = [((x + n - 1) // n * n) // n for x in numels]
        for c in reversed(chunks):
            if not buckets or (buckets[-1] + c) * n > size:
                buckets.append(0)
            buckets[-1] += c
        return len(buckets), max(buckets) * n

    net = ("this machine" if netns is None else
           f"{args.ranks} simulated hosts (bench/netns, tc tbf {args.rate} each way per host), 1 rank per host")
    lines = pc.header(f"reduce_bucket_size sweep, {args.model}, ZeRO stage {args.stage} ({label})", [
        f"network: {net}",
        f"model {args.model} = {pc.MODELS[args.model]}, {sum(numels)} parameters; blocks (elements): {numels}",
        f"runs: {args.steps} steps, medians after the first {args.warmup}; median of {args.repeats} interleaved rounds",
        f"T_compute (median of {len(computes)}): {statistics.median(computes):.1f} ms",
        f"load averages (1 min) before each round: {', '.join(l.split()[0] for l in loads)}"])
    lines += ["", "| bucket (elements) | buckets | largest (elements) | T_compute ms | T_comm ms | T_off ms | "
              "T_on ms (min-max) | exposed on/off ms | hidden | T_on/max | tok/s on | on==off losses |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for size in sizes:
        s = perf_overlap.summarize(rounds[size], computes)
        nb, largest = n_buckets(size)
        lines.append(f"| {size} | {nb} | {largest} | {s['t_compute']:.1f} | {s['t_comm']:.1f} | {s['t_off']:.1f} | "
                     f"{s['t_on']:.1f} ({s['spread_on'][0]:.0f}-{s['spread_on'][1]:.0f}) | "
                     f"{s['exposed_on']:.1f} / {s['exposed_off']:.1f} | {s['hidden']:.0%} | {s['eff']:.2f} | "
                     f"{s['tok_on']:.0f} | {'bitwise' if s['identical'] else 'DIFFER'} |")
    pc.write_results(args.output or pc.ROOT / "bench" / "results" / f"perf_buckets_{label}.md", lines)


if __name__ == "__main__":
    main()
