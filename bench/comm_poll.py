#!/usr/bin/env python3
"""What the comm thread's poll interval (comm.poll_interval_us) costs and saves, per training step.

The MPI comm thread tests a running collective and sleeps comm.poll_interval_us between tests
(0: back to back, the busy-polling of a blocking MPI call). For each interval it reports, from
zerotrain's own metrics.jsonl (median of the steps after --warmup, then the median over
--repeats rounds, the intervals interleaved within each round):

  step      step_ms: wall time of the step
  comm      comm_ms: summed duration of the step's collectives (longer when tests come too rarely)
  exposed   exposed_comm_ms: time compute waited for communication
  comm cpu  comm_cpu_ms: CPU time the comm thread used during the step (taken from compute when
            the rank has one core)

Defaults: model small, stage 2, overlap on, 2 ranks on 2 simulated hosts (bench/netns) at --rate,
each rank pinned to its own core with taskset (--pin: rank r on core r mod nproc), so that a
rank's compute thread and comm thread share one core.

  bench/comm_poll.py --rate 800mbit --intervals 0,20,100,500 --repeats 3
Writes bench/results/comm_poll_<label>.md (label default: <rate>).
"""
import argparse
import os
import statistics
import sys
import tempfile

import perf_common as pc

KEYS = ("step_ms", "comm_ms", "exposed_comm_ms", "comm_cpu_ms")


def pinning_wrapper(tmp):
    """A ZT_BIN that runs the real binary on core (rank mod nproc) only."""
    path = os.path.join(tmp, "zerotrain-pinned")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                "core=$(( ${OMPI_COMM_WORLD_RANK:-0} % $(nproc --all) ))\n"
                f"exec taskset -c \"$core\" {pc.zerotrain_bin()} \"$@\"\n")
    os.chmod(path, 0o755)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--intervals", default="0,20,100,500", help="comm.poll_interval_us values, comma-separated")
    parser.add_argument("--model", default="small")
    parser.add_argument("--stage", type=int, default=2)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--rate", default="800mbit", help="link rate per simulated host (tc rate) or 'local'")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-pin", dest="pin", action="store_false", help="leave the ranks unpinned")
    parser.add_argument("--set", action="append", default=[], help="extra zerotrain KEY=VALUE for every run")
    parser.add_argument("--label")
    args = parser.parse_args()
    intervals = [int(x) for x in args.intervals.split(",")]
    label = args.label or args.rate
    netns = None if args.rate == "local" else pc.Netns(args.ranks, args.rate)
    prefix = pc.launcher_prefix(args.ranks, netns)
    header_bin = pc.zerotrain_bin()
    loads = [pc.load_average()]
    runs = {us: [] for us in intervals}
    try:
        with tempfile.TemporaryDirectory(prefix="zt-comm-poll-") as tmp:
            if args.pin:  # perf_common hands ZT_BIN to launch/zt-run
                os.environ["ZT_BIN"] = pinning_wrapper(tmp)
            for rep in range(args.repeats):
                for us in intervals:
                    sets = pc.model_sets(args.model) + [
                        f"zero_optimization.stage={args.stage}", "zero_optimization.overlap_comm=true",
                        "train.cpu_threads=1", f"comm.poll_interval_us={us}"] + args.set
                    records, _ = pc.run_zerotrain(prefix, sets, args.steps, os.path.join(tmp, f"r{rep}-{us}"))
                    m = pc.medians(records, args.warmup, KEYS)
                    runs[us].append(m)
                    print(f"round {rep} poll {us} us: " + ", ".join(f"{k} {m[k]:.1f}" for k in KEYS) +
                          f" (load {pc.load_average()})", file=sys.stderr)
                loads.append(pc.load_average())
    finally:
        os.environ["ZT_BIN"] = header_bin
        if netns:
            netns.down()
    net = ("this machine (launch/zt-run, shared-memory MPI)" if netns is None else
           f"{args.ranks} simulated hosts (bench/netns: netns + veth + bridge, tc tbf {args.rate} each way per host), "
           "1 rank per host, mpirun over TCP")
    pin = ("each rank pinned to one core with taskset (rank r on core r mod nproc), train.cpu_threads=1: "
           "its compute and comm threads share that core" if args.pin else "ranks not pinned")
    lines = pc.header(f"Comm thread poll interval ({label})", [
        f"binary measured: {header_bin}",
        f"network: {net}; {pin}",
        f"job: model {args.model} ({pc.MODELS[args.model]}), stage {args.stage}, overlap_comm on",
        f"runs: {args.steps} steps each, medians of the steps after the first {args.warmup}; median of "
        f"{args.repeats} rounds, intervals interleaved in each round; extra settings: {' '.join(args.set) or 'none'}",
        f"load averages (1 min) before the rounds and at the end: {', '.join(l.split()[0] for l in loads)}"])
    lines += ["", "| comm.poll_interval_us | step ms | comm ms | exposed comm ms | comm cpu ms | comm cpu / step |",
              "| --- | --- | --- | --- | --- | --- |"]
    for us in intervals:
        med = {k: statistics.median(r[k] for r in runs[us]) for k in KEYS}
        lines.append(f"| {us}{' (spin)' if us == 0 else ''} | {med['step_ms']:.1f} | {med['comm_ms']:.1f} | "
                     f"{med['exposed_comm_ms']:.1f} | {med['comm_cpu_ms']:.1f} | "
                     f"{med['comm_cpu_ms'] / med['step_ms']:.0%} |")
    lines += ["", "Per round (step / exposed / comm cpu, ms):", ""]
    for us in intervals:
        lines.append(f"- {us} us: " + "; ".join(f"{r['step_ms']:.0f} / {r['exposed_comm_ms']:.0f} / {r['comm_cpu_ms']:.0f}"
                                                for r in runs[us]))
    pc.write_results(pc.ROOT / "bench" / "results" / f"comm_poll_{label}.md", lines)


if __name__ == "__main__":
    main()
