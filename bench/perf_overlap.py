#!/usr/bin/env python3
"""How much of zerotrain's communication overlap hides, per ZeRO stage, on 2 simulated nodes.

For each model and stage it measures, from zerotrain's own per-step metrics (medians over the
steps after --warmup, then the median over --repeats rounds run interleaved):

  T_off      step time with zero_optimization.overlap_comm=false (reductions serialised)
  T_on       step time with overlap_comm=true
  T_comm     communication-only time: the summed duration of the step's collectives in the
             overlap-off run (comm_ms), where no backward competes with them
  T_compute  compute-only time: the same per-rank work with no communication — the same job on
             1 rank, started --ranks times concurrently so that the CPU is shared exactly as
             in the multi-rank run
  exposed    exposed_comm_ms of the overlap-on run: time compute waited for communication
  hidden     (T_off - T_on) / T_comm            (goal for stage 2 with T_comm <= T_compute: >= 90 %)
  not waited 1 - exposed / T_comm: the share of communication compute did not wait for (hidden
             from the compute stream, whatever CPU it took)
  eff        T_on / max(T_compute, T_comm)      (1.00 = perfect overlap)
  CPU lost   T_on - T_compute - exposed: step time lost neither to compute nor to waiting, i.e.
             the CPU that communication (the comm thread, MPI, the kernel's TCP) took from the
             compute thread on the same core; beside it comm_cpu_ms, the comm thread's own CPU
             time per step (the kernel's network work done elsewhere is not in it)

  predicted  `zerotrain plan --predict` for the same job: T_comm and the step with overlap on / off,
             from the measured compute rate (the model's FLOPs per step / T_compute) and the link
             (--rate, --link-latency-us): what the α–β model of zero/step_time_model.h expects

It also checks that the losses of the on and off runs are bitwise identical (DESIGN.md).

Network: --rate R runs the ranks on --ranks simulated hosts (bench/netns/netns-hosts.sh: network
namespaces, veth links limited to R by tc tbf, mpirun over TCP); --rate local runs them on this
machine through launch/zt-run (shared-memory MPI).

CPUs: --host-cpus auto (the default with --rate R) gives simulated host I CPU I: netns-hosts.sh
starts host I's processes (mpirun, the MPI daemon, the rank and all its threads) under
`taskset -c I`, and compute-only job r runs under `taskset -c <CPUs of host r>`. --host-cpus none
lets them share every core; explicit lists are netns-hosts.sh's (e.g. 0-1/2-3). Every rank runs
with OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1 unless set otherwise.

  bench/perf_overlap.py                          # tiny and small, stages 0-3, 2 hosts at 100mbit
  bench/perf_overlap.py --models small --rate 200mbit --repeats 5
  bench/perf_overlap.py --models small,wide --stages 0,2,3 --rate 800mbit --host-cpus auto
Writes bench/results/perf_overlap_<label>.md (label default: <rate>).
"""
import argparse
import os
import re
import subprocess
import statistics
import sys
import tempfile

import perf_common as pc


def measure_config(args, model, stage, sets, prefix, tmp, tag):
    """One round: overlap off, overlap on; returns per-run medians and the loss sequences."""
    out = {}
    for overlap in (False, True):
        run_sets = pc.model_sets(model) + [f"zero_optimization.stage={stage}",
                                           f"zero_optimization.overlap_comm={'true' if overlap else 'false'}"] + sets
        records, _ = pc.run_zerotrain(prefix, run_sets, args.steps, os.path.join(tmp, f"{tag}-{int(overlap)}"))
        out[overlap] = pc.medians(records, args.warmup)
        out[overlap]["losses"] = [r["loss"] for r in records]
    return out


def host_cpu_lists(spec, hosts):
    """The taskset CPU list of every simulated host for --host-cpus (None: not pinned), as netns-hosts.sh
    reads the same spec."""
    if spec == "none":
        return None
    if spec == "auto":
        if hosts > os.cpu_count():
            sys.exit(f"--host-cpus auto gives each host one CPU: {hosts} hosts > {os.cpu_count()} CPUs")
        return [str(i) for i in range(hosts)]
    lists = spec.split("/")
    if len(lists) != hosts:
        sys.exit(f"--host-cpus '{spec}' gives {len(lists)} CPU lists for {hosts} hosts")
    return lists


def measure_compute(args, model, stage, sets, tmp, tag, cpu_lists):
    """args.ranks single-rank jobs at once (job r pinned like host r); the median over them of their
    median step times."""
    procs = []
    for r in range(args.ranks):
        run_dir = os.path.join(tmp, f"{tag}-c{r}")
        run_sets = pc.model_sets(model) + [f"zero_optimization.stage={stage}", f"train.seed={1234 + r}"] + sets
        # zt-run would bind one local rank to PE=nproc cores; under taskset it must leave binding alone.
        pin = ["taskset", "-c", cpu_lists[r]] if cpu_lists else []
        bind = ["--bind-to", "none"] if cpu_lists else []
        cmd = pin + [str(pc.ROOT / "launch" / "zt-run"), "-n", "1", *bind, "--", "train", "--config", "configs/default.yaml",
               "--set", f"train.steps={args.steps}", "--set", "train.eval_interval=0",
               "--set", "checkpoint.interval=0", "--set", "logging.log_interval=1000000",
               "--set", f"logging.run_dir={run_dir}"]
        for kv in run_sets:
            cmd += ["--set", kv]
        procs.append((subprocess.Popen(cmd, cwd=pc.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       env=dict(os.environ, ZT_BIN=pc.zerotrain_bin())), run_dir))
    values = []
    for p, run_dir in procs:
        text = p.communicate()[0]
        if p.returncode != 0:
            sys.exit(f"compute-only job failed:\n{text[-3000:]}")
        import json
        from pathlib import Path
        records = [json.loads(x) for x in (Path(run_dir) / "metrics.jsonl").read_text().splitlines()]
        values.append(pc.medians([x for x in records if "step_ms" in x], args.warmup)["step_ms"])
    return statistics.median(values)


def link_gbps(rate):
    """A tc rate (bit units: 800mbit, 1gbit, 100000kbit, 5000000bit) in Gbit/s; None for 'local'/'none'."""
    m = re.fullmatch(r"([0-9.]+)(bit|kbit|mbit|gbit|tbit)", rate.lower())
    if not m:
        return None
    return float(m.group(1)) * {"bit": 1e-9, "kbit": 1e-6, "mbit": 1e-3, "gbit": 1.0, "tbit": 1e3}[m.group(2)]


def measured_link_gbps(prefix, bucket_bytes):
    """busbw in Gbit/s of all_reduce, reduce_scatter and all_gather at one bucket's size, measured by
    `zerotrain bench-comm` through the same launcher as the jobs: the rate MPI really gets."""
    size = str(int(bucket_bytes))
    cmd = list(prefix) + ["bench-comm", "--ops", "all_reduce,reduce_scatter,all_gather", "--min-bytes", size,
                          "--max-bytes", size]
    out = subprocess.run(cmd, cwd=pc.ROOT, capture_output=True, text=True, env={**os.environ, "ZT_BIN": pc.zerotrain_bin()})
    rows = dict(re.findall(r"^\s+(all_reduce|reduce_scatter|all_gather)\s+\d+\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)\s+\d+$",
                           out.stdout, re.M))
    if out.returncode != 0 or len(rows) != 3:
        sys.exit(f"bench-comm failed or printed no busbw ({' '.join(cmd)}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return {op: 8.0 * float(busbw) for op, busbw in rows.items()}


def bucket_bytes(sets):
    """One gradient bucket in fp32 bytes: reduce_bucket_size from --set, else configs/default.yaml's (the jobs'
    config), else zerotrain's default."""
    for kv in reversed(sets):  # the last --set wins, as in zerotrain
        key, _, value = kv.partition("=")
        if key == "zero_optimization.reduce_bucket_size" and value.isdigit():
            return 4 * int(value)
    m = re.search(r"^\s+reduce_bucket_size:\s*(\d+)", (pc.ROOT / "configs" / "default.yaml").read_text(), re.M)
    return 4 * int(m.group(1)) if m else 4 * 6553600


def plan_predict(model, stage, sets, ranks, flops_per_s, gbps, latency_us):
    """`zerotrain plan --predict` for the job; returns (FLOPs per step and rank, {column: ms} of the stage)."""
    cmd = [pc.zerotrain_bin(), "plan", "--config", "configs/default.yaml", "--world-size", str(ranks), "--predict",
           "--flops-per-s", f"{flops_per_s:.6e}", "--link-gbps", f"{gbps:.6g}", "--link-latency-us", f"{latency_us:g}"]
    for kv in pc.model_sets(model) + [f"zero_optimization.stage={stage}"] + sets:
        cmd += ["--set", kv]
    out = subprocess.run(cmd, cwd=pc.ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"plan --predict failed ({' '.join(cmd)}):\n{out.stderr}")
    flops = float(re.search(r"FLOPs per step and rank: (\S+)", out.stdout).group(1))
    table = out.stdout[out.stdout.index("stage  buckets"):]
    row = re.search(rf"^\s+{stage}\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", table, re.M)
    keys = ("buckets", "t_compute", "t_comm", "exposed", "t_on", "t_off")
    return flops, dict(zip(keys, (float(x) for x in row.groups())))


def predict(args, model, stage, t_compute_ms, gbps):
    """The prediction at the rate this T_compute measured: FLOPs per step / T_compute."""
    if gbps is None:
        return None
    flops, _ = plan_predict(model, stage, args.set, args.ranks, 1e9, gbps, args.link_latency_us)
    return plan_predict(model, stage, args.set, args.ranks, flops / (t_compute_ms / 1e3), gbps,
                        args.link_latency_us)[1]


def summarize(rounds, computes):
    med = lambda xs: statistics.median(xs)  # noqa: E731
    t_off = med([r[False]["step_ms"] for r in rounds])
    t_on = med([r[True]["step_ms"] for r in rounds])
    t_comm = med([r[False]["comm_ms"] for r in rounds])
    exposed_on = med([r[True]["exposed_comm_ms"] for r in rounds])
    exposed_off = med([r[False]["exposed_comm_ms"] for r in rounds])
    t_compute = med(computes)
    hidden = (t_off - t_on) / t_comm if t_comm > 0 else float("nan")
    not_waited = 1.0 - exposed_on / t_comm if t_comm > 0 else float("nan")
    eff = t_on / max(t_compute, t_comm)
    identical = all(r[False]["losses"] == r[True]["losses"] for r in rounds)
    comm_cpu_on = med([r[True].get("comm_cpu_ms", float("nan")) for r in rounds])
    return dict(t_off=t_off, t_on=t_on, t_comm=t_comm, t_compute=t_compute, exposed_on=exposed_on,
                exposed_off=exposed_off, hidden=hidden, not_waited=not_waited, eff=eff, identical=identical,
                cpu_lost=t_on - t_compute - exposed_on, comm_cpu_on=comm_cpu_on,
                spread_on=(min(r[True]["step_ms"] for r in rounds), max(r[True]["step_ms"] for r in rounds)),
                tok_on=med([r[True]["tokens_per_s"] for r in rounds]))


def table(rows, first_col):
    lines = [f"| {first_col} | T_compute ms | T_comm ms (predicted) | T_off ms (predicted) | T_on ms (min-max) "
             "(predicted) | exposed on/off ms (predicted on) | hidden (T_off-T_on)/T_comm | not waited 1-exposed/T_comm | "
             "T_on/max(T_compute,T_comm) | CPU lost on ms (comm thread CPU) | tok/s on | on==off losses |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for key, s in rows:
        p = s.get("predicted")
        pred = (lambda k: f" ({p[k]:.1f})") if p else (lambda k: "")  # noqa: E731
        lines.append(f"| {key} | {s['t_compute']:.1f} | {s['t_comm']:.1f}{pred('t_comm')} | "
                     f"{s['t_off']:.1f}{pred('t_off')} | "
                     f"{s['t_on']:.1f} ({s['spread_on'][0]:.0f}-{s['spread_on'][1]:.0f}){pred('t_on')} | "
                     f"{s['exposed_on']:.1f} / {s['exposed_off']:.1f}{pred('exposed')} | {s['hidden']:.0%} | {s['not_waited']:.0%} | "
                     f"{s['eff']:.2f} | {s['cpu_lost']:.1f} ({s['comm_cpu_on']:.1f}) | {s['tok_on']:.0f} | "
                     f"{'bitwise' if s['identical'] else 'DIFFER'} |")
    return lines


def common_args(parser):
    parser.add_argument("--ranks", type=int, default=2, help="ranks = simulated hosts (1 rank per host)")
    parser.add_argument("--rate", default="100mbit", help="link rate per host (tc rate) or 'local'")
    parser.add_argument("--steps", type=int, default=14)
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], help="extra zerotrain KEY=VALUE for every run")
    parser.add_argument("--quiet-load", type=float, default=0.0,
                        help="before each round wait (up to 2 min) for the 1-min load average to drop to this")
    parser.add_argument("--label")
    parser.add_argument("--output")


def predicted_line(args, gbps_of_stage, measured):
    if all(g is None for g in gbps_of_stage.values()):
        return "predicted: none (no link rate with --rate local)"
    if measured:
        link = (f"--link-gbps measured before the rounds by `zerotrain bench-comm` across the hosts at one bucket "
                f"({bucket_bytes(args.set)} bytes), busbw all_reduce {measured['all_reduce']:.3g}, reduce_scatter "
                f"{measured['reduce_scatter']:.3g}, all_gather {measured['all_gather']:.3g} Gbit/s; stage 0 uses "
                "all_reduce's, stages 1-3 the mean of the other two")
    else:
        link = (f"--link-gbps {next(iter(gbps_of_stage.values())):g} "
                f"({'given' if args.link_gbps else 'from --rate'})")
    return ("predicted (in parentheses): `zerotrain plan --predict` at --flops-per-s = the model's FLOPs per step and "
            f"rank / T_compute, {link}, --link-latency-us {args.link_latency_us:g}; the α–β model and block replay of "
            "zero/step_time_model.h")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="tiny,small", help=f"comma-separated, of {', '.join(pc.MODELS)}")
    parser.add_argument("--stages", default="0,1,2,3")
    parser.add_argument("--host-cpus", default="auto",
                        help="CPUs of the simulated hosts (netns-hosts.sh --host-cpus): auto = host I on CPU I, "
                             "'none' = shared, or lists like 0-1/2-3; compute-only jobs are pinned the same way")
    parser.add_argument("--link-latency-us", type=float, default=0.0,
                        help="link latency the prediction assumes (tbf adds none; default 0)")
    parser.add_argument("--link-gbps",
                        help="link bandwidth the prediction assumes, Gbit/s (default: --rate, which MPI over TCP "
                             "does not reach), or 'measure': the busbw `zerotrain bench-comm` measures across the "
                             "hosts at one bucket's size before the rounds (stage 0: all_reduce's; stages 1-3: the "
                             "mean of reduce_scatter's and all_gather's)")
    common_args(parser)
    args = parser.parse_args()
    label = args.label or args.rate
    # One BLAS/OpenMP thread per rank (zt-run's default too), stated in the results header.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cpu_lists = None if args.rate == "local" else host_cpu_lists(args.host_cpus, args.ranks)
    measure_link = args.link_gbps == "measure"
    if measure_link and args.rate == "local":
        sys.exit("--link-gbps measure needs simulated hosts (--rate R)")
    try:
        given = None if args.link_gbps is None or measure_link else float(args.link_gbps)
    except ValueError:
        sys.exit(f"--link-gbps must be a number or 'measure', got '{args.link_gbps}'")
    if given is not None and given <= 0:
        sys.exit(f"--link-gbps must be positive, got {given}")
    netns = None if args.rate == "local" else pc.Netns(
        args.ranks, args.rate, ["--host-cpus", "/".join(cpu_lists)] if cpu_lists else [])
    prefix = pc.launcher_prefix(args.ranks, netns)
    loads = [pc.load_average()]
    results = {}
    try:
        measured = measured_link_gbps(prefix, bucket_bytes(args.set)) if measure_link else None
        gbps_of_stage = {}
        for stage in [int(s) for s in args.stages.split(",")]:
            if measured:
                gbps_of_stage[stage] = measured["all_reduce"] if stage == 0 else (
                    measured["reduce_scatter"] + measured["all_gather"]) / 2
            else:
                gbps_of_stage[stage] = given if given is not None else link_gbps(args.rate)
        with tempfile.TemporaryDirectory(prefix="zt-perf-overlap-") as tmp:
            for model in args.models.split(","):
                for stage in [int(s) for s in args.stages.split(",")]:
                    rounds, computes = [], []
                    for rep in range(args.repeats):
                        if args.quiet_load:
                            pc.wait_for_quiet(args.quiet_load, 120)
                        loads.append(pc.load_average())
                        tag = f"{model}-s{stage}-r{rep}"
                        rounds.append(measure_config(args, model, stage, args.set, prefix, tmp, tag))
                        computes.append(measure_compute(args, model, stage, args.set, tmp, tag, cpu_lists))
                        print(f"{model} stage {stage} round {rep}: off {rounds[-1][False]['step_ms']:.1f} ms, "
                              f"on {rounds[-1][True]['step_ms']:.1f} ms, comm {rounds[-1][False]['comm_ms']:.1f} ms, "
                              f"compute-only {computes[-1]:.1f} ms (load {loads[-1]})", file=sys.stderr)
                    results[(model, stage)] = summarize(rounds, computes)
                    results[(model, stage)]["predicted"] = predict(args, model, stage,
                                                                   results[(model, stage)]["t_compute"],
                                                                   gbps_of_stage[stage])
    finally:
        if netns:
            netns.down()
    net = ("on this machine (launch/zt-run, shared-memory MPI)" if netns is None else
           f"{args.ranks} simulated hosts (bench/netns/netns-hosts.sh: netns + veth + bridge, tc tbf {args.rate} "
           "each way per host, no added delay), 1 rank per host, mpirun over TCP")
    lines = pc.header(f"Overlap of communication with compute, ZeRO stages ({label})", [
        f"network: {net}",
        f"runs: {args.steps} steps each, medians of the steps after the first {args.warmup}; median of "
        f"{args.repeats} interleaved rounds; extra settings: {' '.join(args.set) or 'none'}",
        "models: " + "; ".join(f"{m} = {pc.MODELS[m]}" for m in args.models.split(",")),
        f"load averages (1/5/15 min) before each round: {', '.join(l.split()[0] for l in loads)}",
        "T_compute: the same job on 1 rank, started once per rank concurrently (same CPU sharing, no comm); "
        "T_comm: comm_ms of the overlap-off run (collectives alone on the comm stream)",
        "CPU pinning: " + ("none (--rate local: ranks of one mpirun on this machine's cores)" if args.rate == "local" else
                           "none (--host-cpus none: the simulated hosts share every core)" if not cpu_lists else
                           f"simulated host I runs under `taskset -c <CPUs>` with CPUs {'/'.join(cpu_lists)} for hosts "
                           f"0..{args.ranks - 1} (netns-hosts.sh --host-cpus: host 0's mpirun and rank, every other "
                           "host's MPI daemon and rank, and all their threads); compute-only job r under "
                           "`taskset -c <CPUs of host r>` with zt-run --bind-to none"),
        f"threads per rank: OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']} "
        f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} (zt-run passes them to every rank with -x)",
        predicted_line(args, gbps_of_stage, measured)])
    for model in args.models.split(","):
        lines += ["", f"## {model}", ""]
        lines += table([(f"stage {stage}", results[(model, stage)]) for stage in [int(s) for s in args.stages.split(",")]],
                       "stage")
    pc.write_results(args.output or pc.ROOT / "bench" / "results" / f"perf_overlap_{label}.md", lines)


if __name__ == "__main__":
    main()
