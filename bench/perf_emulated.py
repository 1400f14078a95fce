#!/usr/bin/env python3
"""Overlap and scale on the emulated accelerator: GPT-2 124M's shape, the real engine and real
collectives over simulated hosts, compute that takes no CPU.

The emulated device (config section `emulation`, models/device_time.h) makes every block's forward
and backward wait the time a device of `tflops` x `mfu` and `memory_gbps` would take, without
arithmetic; buffers, buckets, streams, memory accounting and every collective are real and of real
sizes. Because the blocks use no core, 4-8 ranks fit on 2-4 simulated hosts (bench/netns) of a
2-core machine, and the hosts' cores stay free for communication, as on a GPU cluster. Everything
is scaled down by --scale: an H100 (989 TFLOP/s dense bf16 at --mfu, 3350 GB/s) / scale, and links
chosen (--rates) so that T_comm is a GPU cluster's share of T_compute. Ratios, not absolute times,
are what carry over.

Per world (RANKSxHOSTS, ranks placed host by host), rate and ZeRO stage, from zerotrain's own
metrics (medians over the steps after --warmup, then over --repeats rounds; overlap off and on
alternate within a round):

  T_compute  compute_ms of the overlap-off run: the step less the time it waited for communication
  T_comm     comm_ms of the overlap-off run: the step's collectives end to end, nothing competing
  T_off      step time, overlap_comm false;  T_on: overlap_comm true
  hidden     (T_off - T_on) / T_comm;  not waited: 1 - exposed_on / T_comm
  eff        T_on / max(T_compute, T_comm)
  link       busbw of reduce_scatter and all_gather (mean) at one bucket's size, measured by
             `zerotrain bench-comm` across the same hosts before the rounds: what MPI over TCP gets
  predicted  `zerotrain plan --predict` for the same job at that link (rings that cross hosts run at
             the inter-host rate, the slower link; a ring inside a host at the all_gather busbw
             measured there), and its error against T_off / T_on; beside it the prediction at the
             nominal tc rate

  bench/perf_emulated.py                                   # 4x2 and 8x4, stages 0-3, 2gbit
  bench/perf_emulated.py --worlds 4x2 --stages 2 --rates 2gbit,800mbit --repeats 1
  bench/perf_emulated.py --worlds 4x2 --stages 2,3,3h    # 3h: stage 3, zero_hpz_partition_size = ranks per host
Writes bench/results/perf_emulated_<label>.md.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import perf_common as pc
from perf_overlap import measured_link_gbps

H100_TFLOPS, H100_GBPS = 989.0, 3350.0
BUCKET = 6553600  # reduce_bucket_size, elements (configs/gpt2-124m.yaml's)


def gbit_per_s(rate):
    m = re.fullmatch(r"([\d.]+)(k|m|g)bit", rate)
    if not m:
        sys.exit(f"--rates: '{rate}' is not a tc rate such as 800mbit or 2gbit")
    return float(m.group(1)) * {"k": 1e-6, "m": 1e-3, "g": 1.0}[m.group(2)]


def job_sets(args):
    # configs/default.yaml spells out its tiny shape: GPT-2 124M's is given key by key.
    return ["model.n_layer=12", "model.n_head=12", "model.n_embd=768", "model.vocab_size=50304",
            f"model.block_size={args.seq}",
            f"train.train_micro_batch_size_per_gpu={args.micro_batch}", "train.gradient_accumulation_steps=1",
            "train.device=cpu", "train.sample_interval=0", "precision.dtype=bf16",
            "zero_optimization.communication_data_type=bf16", f"zero_optimization.reduce_bucket_size={BUCKET}",
            f"emulation.tflops={H100_TFLOPS / args.scale:g}", f"emulation.mfu={args.mfu:g}",
            f"emulation.memory_gbps={H100_GBPS / args.scale:g}"] + args.set


def parse_stage(text):
    """'2' -> (2, []); '3h' -> stage 3 with the secondary partition of one host's ranks."""
    m = re.fullmatch(r"([0-3])(h?)", text)
    if not m:
        sys.exit(f"--stages: '{text}' is not a stage 0-3, or 3h (stage 3, zero_hpz_partition_size = ranks per host)")
    return int(m.group(1)), bool(m.group(2))


def stage_sets(stage, hpz, ppn):
    return [f"zero_optimization.stage={stage}"] + ([f"zero_optimization.zero_hpz_partition_size={ppn}"] if hpz else [])


def predict(args, ranks, sets, gbps, ppn, intra_gbps):
    cmd = [pc.zerotrain_bin(), "plan", "--config", "configs/default.yaml", "--world-size", str(ranks), "--predict",
           "--link-gbps", f"{gbps:.6g}"]
    if ppn > 1:
        cmd += ["--ranks-per-host", str(ppn), "--intra-host-gbps", f"{intra_gbps:.6g}"]
    stage = next(kv.split("=")[1] for kv in sets if kv.startswith("zero_optimization.stage="))
    for kv in job_sets(args) + sets:
        cmd += ["--set", kv]
    out = subprocess.run(cmd, cwd=pc.ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"plan --predict failed:\n{out.stdout}\n{out.stderr}")
    for line in out.stdout.splitlines():
        cols = line.split()
        if len(cols) == 7 and cols[0] == str(stage):
            return {"compute": float(cols[2]), "comm": float(cols[3]), "on": float(cols[5]), "off": float(cols[6])}
    sys.exit(f"no stage {stage} row in:\n{out.stdout}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worlds", default="4x2,8x4", help="RANKSxHOSTS, comma-separated")
    ap.add_argument("--stages", default="0,1,2,3")
    ap.add_argument("--rates", default="2gbit", help="link rates per host (tc rates), comma-separated")
    ap.add_argument("--scale", type=float, default=1000.0, help="the emulated device is an H100 / scale")
    ap.add_argument("--mfu", type=float, default=0.4)
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--set", action="append", default=[], help="extra zerotrain KEY=VALUE for every run")
    ap.add_argument("--label")
    args = ap.parse_args()
    label = args.label or "_".join(args.rates.split(","))
    rows, loads = [], []
    with tempfile.TemporaryDirectory(prefix="zt-perf-emulated-") as tmp:
        for world in args.worlds.split(","):
            ranks, hosts = (int(x) for x in world.split("x"))
            if ranks % hosts:
                sys.exit(f"--worlds {world}: the ranks must divide evenly among the hosts")
            for rate in args.rates.split(","):
                netns = pc.Netns(hosts, rate)
                try:
                    prefix = pc.launcher_prefix(ranks, netns, ppn=ranks // hosts)
                    # What MPI over TCP really gets across these hosts at one bf16 bucket's size.
                    busbw = measured_link_gbps(prefix, 2 * BUCKET)
                    link = (busbw["reduce_scatter"] + busbw["all_gather"]) / 2
                    # Inside one host (shared memory): what a secondary partition's gathers get.
                    ppn = ranks // hosts
                    intra = (measured_link_gbps(pc.launcher_prefix(ppn, netns, ppn=ppn), 2 * BUCKET)["all_gather"]
                             if ppn > 1 else 0.0)
                    for stage, hpz in (parse_stage(s) for s in args.stages.split(",")):
                        runs = {False: [], True: []}
                        for rep in range(args.repeats):
                            loads.append(pc.load_average().split()[0])
                            for overlap in ((False, True) if rep % 2 == 0 else (True, False)):
                                sets = job_sets(args) + stage_sets(stage, hpz, ppn) + [
                                    f"zero_optimization.overlap_comm={str(overlap).lower()}"]
                                run_dir = os.path.join(tmp, f"{world}-{rate}-s{stage}{'h' * hpz}-{rep}-{int(overlap)}")
                                records, _ = pc.run_zerotrain(prefix, sets, args.steps, run_dir)
                                runs[overlap].append(pc.medians(records, args.warmup))
                                print(f"{world} {rate} stage {stage}{'h' * hpz} overlap {overlap} round {rep}: "
                                      f"{runs[overlap][-1]['step_ms']:.0f} ms", file=sys.stderr)
                        med = lambda overlap, key: statistics.median(r[key] for r in runs[overlap])  # noqa: E731
                        t_compute, t_comm = med(False, "compute_ms"), med(False, "comm_ms")
                        t_off, t_on, exposed = med(False, "step_ms"), med(True, "step_ms"), med(True, "exposed_comm_ms")
                        p = predict(args, ranks, stage_sets(stage, hpz, ppn), link, ppn, intra)
                        nominal = predict(args, ranks, stage_sets(stage, hpz, ppn), gbit_per_s(rate), ppn, intra)
                        name = f"{stage} + hpz {ppn}" if hpz else f"{stage}"
                        rows.append(f"| {world} | {rate} | {name} | {t_compute:.0f} | {t_comm:.0f} "
                                    f"({t_comm / t_compute:.2f}) | {t_off:.0f} | {t_on:.0f} | "
                                    f"{(t_off - t_on) / t_comm:.0%} | {1 - exposed / t_comm:.0%} | "
                                    f"{t_on / max(t_compute, t_comm):.2f} | {link:.2f}"
                                    f"{f' ({intra:.1f} inside a host)' if hpz else ''} | {p['compute']:.0f} / "
                                    f"{p['comm']:.0f} | {p['on']:.0f} / {p['off']:.0f} | "
                                    f"{(p['on'] - t_on) / t_on:+.1%} / {(p['off'] - t_off) / t_off:+.1%} | "
                                    f"{nominal['on']:.0f} ({(nominal['on'] - t_on) / t_on:+.1%}) |")
                finally:
                    netns.down()
    lines = pc.header(f"ZeRO overlap on the emulated accelerator ({label})", [
        f"emulated device: an H100 / {args.scale:g} = {H100_TFLOPS / args.scale:g} TFLOP/s x MFU {args.mfu:g}, "
        f"{H100_GBPS / args.scale:g} GB/s (models/device_time.h); GPT-2 124M shape (vocabulary 50304), micro batch "
        f"{args.micro_batch} x {args.seq}, bf16 parameters and communication, 1 micro batch per step",
        "network: bench/netns simulated hosts (tc tbf at the rate, each way per host), ranks placed host by host: "
        "shared memory inside a host, TCP between hosts; hosts share this machine's cores (the blocks take none)",
        f"runs: {args.steps} steps, medians after {args.warmup}, then over {args.repeats} rounds (off/on alternating)",
        f"load averages (1 min) before each round: {', '.join(loads)}",
        "what the emulation leaves out: on a GPU, collectives also take SMs and memory bandwidth from compute "
        "(NCCL's reduction kernels); see bench/README.md for the bound"])
    lines += ["", "| world (ranks x hosts) | rate | stage | T_compute ms | T_comm ms (/ T_compute) | T_off ms | "
              "T_on ms | "
              "hidden | not waited | T_on / max | measured link Gbit/s | predicted T_compute / T_comm ms | "
              "predicted on / off ms | prediction error on / off | predicted on at the nominal rate (error) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"] + rows
    pc.write_results(pc.ROOT / "bench" / "results" / f"perf_emulated_{label}.md", lines)


if __name__ == "__main__":
    main()
