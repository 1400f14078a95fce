"""Shared pieces of the bench/perf_*.py scripts: model presets, launching zerotrain (locally or on
simulated hosts of bench/netns), reading metrics.jsonl, and the provenance header every results
file starts with (commit, working-tree state, machine, load average)."""
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NETNS = ROOT / "bench" / "netns" / "netns-hosts.sh"

# GPT-2 shapes used by the benchmarks, as zerotrain --set overrides of configs/default.yaml (byte-level
# vocabulary 256, data/fortunes). The same numbers feed tools/torch_gpt2_peer.py.
MODELS = {
    # configs/default.yaml as it is: 2 layers x 64 wide, T = 64, 4 sequences per rank (~0.1M parameters)
    "tiny": {"n_layer": 2, "n_head": 4, "n_embd": 64, "block_size": 64, "micro_batch": 4},
    # 4 layers x 256 wide, T = 128, 4 sequences per rank (~3.3M parameters, 13 MB of fp32 gradients)
    "small": {"n_layer": 4, "n_head": 4, "n_embd": 256, "block_size": 128, "micro_batch": 4},
    # 6 layers x 512 wide, T = 256, 4 sequences per rank (~19M parameters): products large enough for
    # the BLAS to run near its peak, where the MFU goal is measured
    "wide": {"n_layer": 6, "n_head": 8, "n_embd": 512, "block_size": 256, "micro_batch": 4},
    # GPT-2 124M's depth (12 layers) at width 128, T = 128 (~2.4M parameters): one layer is 1/12 of
    # the gradient as in GPT-2 124M, so the first layer's reduction and gather (which no schedule
    # can hide) are as small a part of the communication as there, unlike small's 1/4
    "deep": {"n_layer": 12, "n_head": 4, "n_embd": 128, "block_size": 128, "micro_batch": 4},
}


def model_sets(name):
    m = MODELS[name]
    return [f"model.n_layer={m['n_layer']}", f"model.n_head={m['n_head']}", f"model.n_embd={m['n_embd']}",
            f"model.block_size={m['block_size']}", f"train.train_micro_batch_size_per_gpu={m['micro_batch']}"]


def zerotrain_bin():
    return os.environ.get("ZT_BIN", str(ROOT / "build" / "zerotrain"))


def git_state():
    """What the measured binary was built from: SOURCE_COMMIT next to it (a clean `git archive` of that
    commit, see bench/README.md), else the checkout's HEAD and whether the engine sources are modified."""
    marker = Path(zerotrain_bin()).resolve().parent / "SOURCE_COMMIT"
    if marker.exists():
        return f"{marker.read_text().strip()} (binary built from a clean export of that commit)"
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "zero", "comm", "runtime",
                            "models", "optim"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return commit + (" (+ uncommitted changes in zero/ comm/ runtime/ models/ optim/)" if dirty else "")


# Dense bf16 datasheet rates (FLOP/s), most specific name first: nvidia-smi calls the SXM parts
# "NVIDIA H100 80GB HBM3" and "NVIDIA H200".
BF16_PEAKS = (("H100 PCIe", 756e12), ("H100 NVL", 835e12), ("H200 NVL", 835e12), ("H100", 989e12), ("H200", 989e12),
              ("A100", 312e12))


def gpu_name():
    out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else "?"


def gpu_bf16_peak(name):
    """The dense bf16 peak of the GPU called `name` (0.0 when unknown)."""
    return next((peak for key, peak in BF16_PEAKS if key in name), 0.0)


def load_average():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def machine():
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mpi = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()
    return f"{os.cpu_count()} cores ({cpu}), Linux {os.uname().release}, {mpi[0] if mpi else 'mpirun ?'}"


def header(title, extra_lines=()):
    lines = [f"# {title}", "",
             f"- commit: {git_state()}; binary {zerotrain_bin()}",
             f"- machine: {machine()}",
             f"- table written {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())} (end of the measurements); load average then: {load_average()}"]
    env = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith(("OPENBLAS_", "OMPI_MCA_", "ZT_MPI"))]
    if env:
        lines.append(f"- environment: {' '.join(env)}")
    lines += [f"- {line}" for line in extra_lines]
    return lines


def wait_for_quiet(max_load, max_wait_s, log=sys.stderr):
    """Waits (up to max_wait_s) until the 1-minute load average is at most max_load."""
    deadline = time.time() + max_wait_s
    while True:
        load = float(load_average().split()[0])
        if load <= max_load or time.time() >= deadline:
            return load
        print(f"  load average {load:.2f} > {max_load}: waiting", file=log)
        time.sleep(15)


class Netns:
    """Simulated hosts for the whole benchmark: `up` once, every job through `run`, `down` at the end."""

    def __init__(self, hosts, rate, extra=()):
        self.hosts, self.rate = hosts, rate
        out = subprocess.run(["bash", str(NETNS), "up", str(hosts), rate, *extra], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"netns-hosts.sh up failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
        m = re.search(r"\b(zt[0-9a-f]+)\b", out.stdout + out.stderr)
        if not m:
            sys.exit(f"cannot find the netns id in:\n{out.stdout}\n{out.stderr}")
        self.id = m.group(1)

    def prefix(self):
        return ["bash", str(NETNS), "run", self.id, "--"]

    def down(self):
        subprocess.run(["bash", str(NETNS), "down", self.id], capture_output=True, text=True)


def launcher_prefix(ranks, netns=None, ppn=1):
    zt_run = str(ROOT / "launch" / "zt-run")
    if netns is None:
        return [zt_run, "-n", str(ranks), "--"]
    # netns-hosts.sh run substitutes @hostfile and exports the rsh agent / TCP settings zt-run reads
    return netns.prefix() + [zt_run, "--hostfile", "@hostfile", "--ppn", str(ppn), "-n", str(ranks), "--"]


def run_zerotrain(prefix, sets, steps, run_dir, config="configs/default.yaml", env=None):
    """Trains `steps` steps; returns the per-step records of metrics.jsonl (rank 0)."""
    cmd = list(prefix) + ["train", "--config", config,
            "--set", f"train.steps={steps}", "--set", "train.eval_interval=0", "--set", "checkpoint.interval=0",
            "--set", "logging.log_interval=1000000", "--set", f"logging.run_dir={run_dir}"]
    for kv in sets:
        cmd += ["--set", kv]
    full_env = {**os.environ, "ZT_BIN": zerotrain_bin(), **(env or {})}  # env may name another ZT_BIN
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=full_env)
    if result.returncode != 0:
        sys.exit(f"job failed ({shlex.join(cmd)}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    records = [json.loads(line) for line in (Path(run_dir) / "metrics.jsonl").read_text().splitlines()]
    return [r for r in records if "step_ms" in r], result.stdout + result.stderr


def medians(records, warmup, keys=("step_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "comm_cpu_ms", "tokens_per_s")):
    rows = records[warmup:]
    return {k: statistics.median(r[k] for r in rows) for k in keys if rows and k in rows[0]}


def write_results(path, lines):
    text = "\n".join(lines) + "\n"
    print(text)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text)
    print(f"wrote {path}", file=sys.stderr)
