#!/usr/bin/env python3
"""zerotrain next to PyTorch on the same GPT-2 job, same machine, same run: tokens/s and ratios.

The trainers, run interleaved in every round (so they see the same machine load):
  zt-s0     zerotrain ZeRO stage 0 (all-reduce data parallel)
  torch-ddp PyTorch DistributedDataParallel (gloo) + torch.optim.AdamW       (peer of zt-s0)
  zt-s1     zerotrain ZeRO stage 1 (optimizer state sharded)
  torch-zro DDP + torch.distributed.optim.ZeroRedundancyOptimizer(AdamW)      (peer of zt-s1 without ds-s1)
  ds-s1/2/3 DeepSpeed's engine at ZeRO stage 1/2/3 (gloo, overlap_comm, the same bucket sizes,
            torch's AdamW as its client optimizer, its gradient_clipping)  (peers of zt-s1/2/3)
  zt-s2, zt-s3  zerotrain ZeRO stages 2 and 3
  fsdp2     PyTorch FSDP2: fully_shard on every block and on the root (gloo)   (peer of zt-s3)
Same GPT-2 (layers, width, sequence, micro batch, global batch), AdamW with the same
hyperparameters, warmup-cosine schedule and clipping, fp32 on CPU (or bf16: --precision bf16, PyTorch
under torch.autocast), 1 compute thread per rank.
tools/torch_gpt2_peer.py builds the PyTorch side from zerotrain's exact initial weights and reads
zerotrain's exact batches from the same token shards, so the losses must agree step by step: the
table shows the largest loss difference over the first --check-steps steps and over all steps.

Both systems bucket gradients alike: DDP's bucket_cap_mb (default 25, DDP's own default) and zerotrain's
reduce_bucket_size set to the same bytes of fp32 (25 MiB = 6553600 elements, also zerotrain's own
default; configs/default.yaml's 25000 is sized for its 0.1M-parameter demo model), and both start
with a 1 MiB first bucket. --set zero_optimization.reduce_bucket_size=N overrides zerotrain's.

PyTorch and DeepSpeed come from $ZT_TORCH_PYTHON when set, else from the repository's .venv with the
pinned versions (scripts/setup-python.sh, run here, installs them from PyPI on first use).

  bench/perf_peer.py                       # tiny and small, 2 ranks on this machine
  bench/perf_peer.py --rate 100mbit        # 2 simulated hosts (bench/netns), 1 rank each
  bench/perf_peer.py --baseline OLD_BIN    # adds zt-s0-base / zt-s1-base (that binary) to every round
  bench/perf_peer.py --baseline-launch='--bind-to core'   # -base rows: this binary, other zt-run options
  bench/perf_peer.py --neighbour 0.5       # every trainer also runs beside a process taking half a core

The noisy neighbour (--neighbour SHARE) is stress-ng's cpu stressor at SHARE x 100 % load on one
worker, started before and stopped after each noisy run, so every system meets it alike; each
trainer runs quiet and noisy back to back in every round. scripts/setup.sh --bench installs
stress-ng (run here when it is missing).
Writes bench/results/perf_peer_<label>.md.
"""
import argparse
import contextlib
import json
import os
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import perf_common as pc

ROOT = pc.ROOT


def torch_python():
    """An interpreter with torch, numpy and DeepSpeed: $ZT_TORCH_PYTHON, else the repository's .venv
    with the pinned versions of tools/requirements-parity.txt (scripts/setup-python.sh installs them
    from PyPI on first use and returns at once afterwards)."""
    if os.environ.get("ZT_TORCH_PYTHON"):
        return os.environ["ZT_TORCH_PYTHON"]
    subprocess.check_call(["bash", str(ROOT / "scripts" / "setup-python.sh")], stdout=sys.stderr)
    return str(ROOT / ".venv" / "bin" / "python")


def baseline_commit(binary):
    marker = Path(binary).resolve().parent / "SOURCE_COMMIT"
    return marker.read_text().strip() if marker.exists() else "an unrecorded commit (no SOURCE_COMMIT beside it)"


def run_torch(args, py, model, mode, out_path, netns):
    m = pc.MODELS[model]
    port = str(random.randint(20000, 40000))
    stage = []
    if mode.startswith("deepspeed"):  # "deepspeed<k>": DeepSpeed's ZeRO stage k
        mode, stage = "deepspeed", ["--zero-stage", mode[len("deepspeed"):]]
    peer = [py, str(ROOT / "tools" / "torch_gpt2_peer.py"), "--mode", mode, *stage, "--n-layer", str(m["n_layer"]),
            "--n-head", str(m["n_head"]), "--n-embd", str(m["n_embd"]), "--block-size", str(m["block_size"]),
            "--micro-batch", str(m["micro_batch"]), "--steps", str(args.steps), "--bucket-cap-mb",
            str(args.bucket_cap_mb), "--out", out_path, "--master-port", port, "--precision",
            TORCH_PRECISION[args.precision]]
    env_flags = ["-x", "OMP_NUM_THREADS=1", "-x", "MKL_NUM_THREADS=1", "-x", "OPENBLAS_NUM_THREADS=1",
                 "-x", "DS_ACCELERATOR=cpu"]
    if netns is None:
        cmd = ["mpirun", "--allow-run-as-root", "-np", str(args.ranks), "--bind-to", "none", *env_flags,
               *peer, "--master-addr", "127.0.0.1"]
    else:
        # On the simulated hosts: mpirun inside host 0 with the harness's flags; gloo on eth0.
        inner = (f"mpirun --allow-run-as-root $ZT_NETNS_MPIRUN_ARGS --hostfile $ZT_NETNS_HOSTFILE -np {args.ranks} "
                 f"--map-by ppr:1:node --bind-to none {' '.join(env_flags)} -x GLOO_SOCKET_IFNAME=eth0 "
                 f"{shlex.join(peer)} --master-addr ${{ZT_NETNS_HOSTS%% *}}")
        cmd = netns.prefix() + ["bash", "-c", inner]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    records = [json.loads(line) for line in Path(out_path).read_text().splitlines()] if Path(out_path).exists() else []
    if result.returncode != 0 or len(records) != args.steps:
        sys.exit(f"torch job failed ({shlex.join(cmd)}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return records


@contextlib.contextmanager
def neighbour(share, cpu):
    """A competing process that keeps `share` of one core busy while the block runs; pinned to core
    `cpu` when given, else placed (and moved) by the kernel like any other process."""
    cmd = ["stress-ng", "--cpu", "1", "--cpu-load", str(round(share * 100)), "--timeout", "3600", "--quiet"]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL)
    time.sleep(0.2)
    if proc.poll() is not None:  # a noisy run beside no neighbour would be a quiet run mislabelled
        sys.exit(f"the neighbour ({shlex.join(cmd)}) exited at once with status {proc.returncode}")
    try:
        yield
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # stress-ng and its worker
        proc.wait()


# PyTorch's own way to train each precision on the CPU: bf16 is torch.autocast over the fp32 model.
TORCH_PRECISION = {"fp32": "fp32", "bf16": "autocast-bf16"}

TRAINERS = [("zt-s0", "zt", 0), ("torch-ddp", "torch", "ddp"), ("zt-s1", "zt", 1), ("torch-zro", "torch", "zero"),
            ("ds-s1", "torch", "deepspeed1"), ("zt-s2", "zt", 2), ("ds-s2", "torch", "deepspeed2"),
            ("zt-s3", "zt", 3), ("ds-s3", "torch", "deepspeed3"), ("fsdp2", "torch", "fsdp2")]


def peer_of(runs):
    """Each trainer's peer: stage k of zerotrain against stage k of DeepSpeed when it ran, else PyTorch's
    nearest; FSDP2 against zerotrain's stage 3."""
    peers = {"zt-s0": "torch-ddp", "torch-ddp": "zt-s0", "zt-s1": "torch-zro", "torch-zro": "zt-s1",
             "zt-s2": "torch-ddp", "zt-s3": "torch-ddp", "ds-s1": "zt-s1", "ds-s2": "zt-s2", "ds-s3": "zt-s3",
             "fsdp2": "zt-s3"}
    for stage in (1, 2, 3):
        if f"ds-s{stage}" in runs:
            peers[f"zt-s{stage}"] = f"ds-s{stage}"
    if "ds-s3" not in runs and "fsdp2" in runs:
        peers["zt-s3"] = "fsdp2"
    peers.update({name + "-base": peers[name] for name in list(peers) if name.startswith("zt")})
    return peers


def ratios(args, trainers, runs):
    """One condition's table: (header lines, rows, {trainer: tokens/s median, per-round values, ratio})."""
    tok = {n: [statistics.median(r["tokens_per_s"] for r in recs[args.warmup:]) for recs in runs[n]] for n in runs}
    step_ms = {n: statistics.median(statistics.median(r["step_ms"] for r in recs[args.warmup:]) for recs in runs[n])
               for n in runs}
    title = ["| trainer | tokens/s (median) | step ms | ratio to its peer (zerotrain / PyTorch) | "
             f"max loss diff, first {args.check_steps} steps | max loss diff, all {args.steps} | "
             "max relative loss diff | loss at last step |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    rows, summary, peers = [], {}, peer_of(runs)
    for name, _, _ in trainers:
        summary[name] = {"tok": statistics.median(tok[name]), "rounds": tok[name], "ratio": "-"}
        peer = peers[name]
        if peer not in runs:
            rows.append(f"| {name} | {summary[name]['tok']:.0f} | {step_ms[name]:.1f} | - | - | - | - | "
                        f"{runs[name][0][-1]['loss']:.4f} |")
            continue
        zt, other = (name, peer) if name.startswith("zt") else (peer, name)
        ratio = statistics.median(a / b for a, b in zip(tok[zt], tok[other]))
        summary[name]["ratio"] = f"{ratio:.2f} ({zt} / {other})"
        mine, ref = runs[zt][0], runs[other][0]
        diffs = [abs(a["loss"] - b["loss"]) for a, b in zip(mine, ref)]
        relative = max(d / abs(b["loss"]) for d, b in zip(diffs, ref))
        rows.append(f"| {name} | {summary[name]['tok']:.0f} | {step_ms[name]:.1f} | {summary[name]['ratio']} | "
                    f"{max(diffs[:args.check_steps]):.2e} | {max(diffs):.2e} | {relative:.2e} | "
                    f"{runs[name][0][-1]['loss']:.4f} |")
    return title, rows, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="tiny,small")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--rate", default="local", help="'local' or a tc rate for simulated hosts (bench/netns)")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check-steps", type=int, default=5)
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0,
                        help="DDP's bucket_cap_mb; zerotrain's reduce_bucket_size is the same bytes of fp32")
    parser.add_argument("--precision", default="fp32", choices=sorted(TORCH_PRECISION),
                        help="zerotrain's precision.dtype; PyTorch trains bf16 with torch.autocast('cpu', bfloat16)")
    parser.add_argument("--set", action="append", default=[], help="extra zerotrain KEY=VALUE")
    parser.add_argument("--trainers", default=",".join(name for name, _, _ in TRAINERS),
                        help="which of " + ", ".join(name for name, _, _ in TRAINERS) + " to run")
    parser.add_argument("--baseline", help="a second zerotrain binary: each zerotrain trainer also runs with it "
                        "(as NAME-base) in every round, so old and new are compared in the same rounds")
    parser.add_argument("--neighbour", type=float, default=0.0, metavar="SHARE",
                        help="also run every trainer beside a process that keeps SHARE of one core busy "
                        "(stress-ng --cpu 1 --cpu-load SHARE*100), e.g. 0.5; the table shows quiet and noisy")
    parser.add_argument("--neighbour-cpu", type=int, help="pin the neighbour to this core (default: unpinned)")
    parser.add_argument("--baseline-launch", default="",
                        help="zt-run options for the -base rows (e.g. '--bind-to none'), with or without --baseline")
    parser.add_argument("--label")
    parser.add_argument("--output")
    args = parser.parse_args()
    label = args.label or (args.rate if args.precision == "fp32" else f"{args.rate}_{args.precision}")
    if args.neighbour and not 0 < args.neighbour <= 1:
        sys.exit(f"--neighbour {args.neighbour}: a share of one core, in (0, 1]")
    if args.neighbour and not args.label:
        label += f"_neighbour{round(args.neighbour * 100)}"
    if args.neighbour and not shutil.which("stress-ng"):
        subprocess.check_call(["bash", str(ROOT / "scripts" / "setup.sh"), "--bench"], stdout=sys.stderr)
    conditions = ["quiet"] + (["noisy"] if args.neighbour else [])
    bucket_elements = int(args.bucket_cap_mb * 2**20 / 4)
    args.set = [f"zero_optimization.reduce_bucket_size={bucket_elements}",
                f"precision.dtype={args.precision}"] + args.set  # a later --set wins
    chosen = args.trainers.split(",")
    unknown = [t for t in chosen if t not in {name for name, _, _ in TRAINERS}]
    if unknown:
        sys.exit(f"--trainers: unknown {', '.join(unknown)}")
    trainers = []
    for name, kind, what in TRAINERS:
        if name in chosen:
            trainers.append((name, kind, what))
            if (args.baseline or args.baseline_launch) and kind == "zt":
                trainers.append((name + "-base", kind, what))
    baseline_env = {"ZT_BIN": str(Path(args.baseline).resolve())} if args.baseline else None
    py = torch_python()
    versions = subprocess.run([py, "-c", "import torch, importlib.metadata as m; "
                               "print(torch.__version__, m.version('deepspeed'))"],
                              capture_output=True, text=True).stdout.split()
    torch_version = f"{versions[0]}, deepspeed {versions[1]}" if len(versions) == 2 else "unknown"
    netns = None if args.rate == "local" else pc.Netns(args.ranks, args.rate)
    prefix = pc.launcher_prefix(args.ranks, netns)
    base_prefix = prefix[:-1] + shlex.split(args.baseline_launch) + ["--"]  # zt-run's options before its "--"
    loads = [pc.load_average()]
    results = {}
    try:
        with tempfile.TemporaryDirectory(prefix="zt-perf-peer-") as tmp:
            for model in args.models.split(","):
                runs = {(cond, name): [] for cond in conditions for name, _, _ in trainers}
                for rep in range(args.repeats):
                    loads.append(pc.load_average())
                    for name, kind, what in trainers:
                        for cond in conditions:
                            path = os.path.join(tmp, f"{model}-{name}-{rep}-{cond}")
                            with (neighbour(args.neighbour, args.neighbour_cpu) if cond == "noisy"
                                  else contextlib.nullcontext()):
                                if kind == "zt":
                                    base = name.endswith("-base")
                                    records, _ = pc.run_zerotrain(base_prefix if base else prefix, pc.model_sets(model) + [
                                        f"zero_optimization.stage={what}"] + args.set, args.steps, path,
                                        env=baseline_env if base else None)
                                else:
                                    records = run_torch(args, py, model, what, path + ".jsonl", netns)
                            runs[(cond, name)].append(records)
                            print(f"{model} {name} {cond} round {rep}: "
                                  f"{statistics.median(r['tokens_per_s'] for r in records[args.warmup:]):.0f} tok/s",
                                  file=sys.stderr)
                results[model] = runs
    finally:
        if netns:
            netns.down()

    net = ("this machine: zerotrain through launch/zt-run (Open MPI, shared memory); PyTorch through mpirun "
           "with gloo over loopback TCP" if netns is None else
           f"{args.ranks} simulated hosts (bench/netns, tc tbf {args.rate} each way per host), 1 rank per host, "
           "TCP for both (Open MPI btl tcp; gloo on eth0)")
    lines = pc.header(f"zerotrain vs PyTorch DDP / ZeroRedundancyOptimizer / FSDP2 / DeepSpeed ({label})", [
        f"network: {net}; {args.ranks} ranks, 1 compute thread per rank; torch {torch_version}",
        "binding: zerotrain as zt-run starts it by default (each rank bound to a core when ranks equal cores); "
        "PyTorch and DeepSpeed unbound (mpirun --bind-to none), as torchrun starts them",
        f"precision: zerotrain precision.dtype={args.precision}; PyTorch --precision {TORCH_PRECISION[args.precision]}"
        + (" (torch.autocast on the CPU: bf16 products on an fp32 model, so its losses differ from zerotrain's bf16 "
           "by about bf16's rounding, not by fp32's)" if args.precision == "bf16" else ""),
        f"runs: {args.steps} steps each, tokens/s = median over the steps after the first {args.warmup}, then the "
        f"median over {args.repeats} interleaved rounds; ratio = median of the per-round ratios",
        "models: " + "; ".join(f"{m} = {pc.MODELS[m]}" for m in args.models.split(",")),
        f"buckets: zerotrain {' '.join(args.set)}; "
        f"DDP bucket_cap_mb {args.bucket_cap_mb:g}",
        f"load averages (1 min) before each round: {', '.join(l.split()[0] for l in loads)}",
        "same initial weights (zerotrain's init reproduced bit for bit) and the same batches: losses compared step "
        "by step"] + ([f"baseline (the -base rows): {args.baseline or 'the same binary'}"
                       + (f", built from {baseline_commit(args.baseline)}" if args.baseline else "")
                       + (f", launched with zt-run {args.baseline_launch}" if args.baseline_launch else "")
                       + "; new / base = median of the per-round ratios of tokens/s"]
                      if args.baseline or args.baseline_launch else []))
    for model in args.models.split(","):
        lines += ["", f"## {model}"]
        tables = {cond: ratios(args, trainers, {name: results[model][(cond, name)] for name, _, _ in trainers})
                  for cond in conditions}
        for cond in conditions:
            title, rows, _ = tables[cond]
            lines += ["", f"### {cond}" + (f": beside a neighbour taking {args.neighbour:g} of one core (stress-ng"
                                            f"{'' if args.neighbour_cpu is None else f' pinned to core {args.neighbour_cpu}'}"
                                            ")" if cond == "noisy" else ""), "", *title, *rows]
        if len(conditions) == 2:
            quiet, noisy = tables["quiet"][2], tables["noisy"][2]
            lines += ["", "### quiet and noisy side by side", "",
                      "| trainer | tokens/s quiet | tokens/s noisy | noisy / quiet | ratio to its peer quiet | "
                      "ratio to its peer noisy |", "| --- | --- | --- | --- | --- | --- |"]
            for name, _, _ in trainers:
                q, n = quiet[name], noisy[name]
                lines.append(f"| {name} | {q['tok']:.0f} | {n['tok']:.0f} | {n['tok'] / q['tok']:.2f} | "
                             f"{q['ratio']} | {n['ratio']} |")
        if args.baseline or args.baseline_launch:
            lines += ["", "| trainer | condition | new / base tokens/s (median of per-round ratios) | per round |",
                      "| --- | --- | --- | --- |"]
            for cond in conditions:
                tok = tables[cond][2]
                for name, kind, _ in trainers:
                    if kind == "zt" and not name.endswith("-base"):
                        per_round = [a / b for a, b in zip(tok[name]["rounds"], tok[name + "-base"]["rounds"])]
                        lines.append(f"| {name} | {cond} | {statistics.median(per_round):.3f} | "
                                     f"{', '.join(f'{r:.3f}' for r in per_round)} |")
    pc.write_results(args.output or ROOT / "bench" / "results" / f"perf_peer_{label}.md", lines)


if __name__ == "__main__":
    main()
