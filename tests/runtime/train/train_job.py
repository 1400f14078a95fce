"""What the Python training tests share: failing with a message, and a 2-rank `zerotrain train`
under mpirun whose per-step metrics come back."""
import json
import socket
import subprocess
import sys
from pathlib import Path


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def train_two_ranks(zerotrain, mpirun, config: Path, sets, run_dir: Path, extra=()):
    """Trains with `--set` for each of `sets` and logging.run_dir=run_dir; fails the test if the job
    fails. Returns (the metrics.jsonl records of the steps, stdout + stderr)."""
    cmd = [*mpirun, "-np", "2", zerotrain, "train", "--config", config, *extra]
    for kv in [*sets, f"logging.run_dir={run_dir}"]:
        cmd += ["--set", kv]
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{run_dir.name} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [r for r in rows if "step_ms" in r], result.stdout + result.stderr

# An emulated device slow enough to measure: 0.001 TFLOP/s x MFU 0.4, so the default config's tiny
# GPT-2 takes about half a second per micro batch.
SLOW_EMULATED_DEVICE = ["emulation.tflops=0.001", "emulation.mfu=0.4", "emulation.memory_gbps=1"]


def free_port():
    """A TCP port nobody listens on now: the PyTorch peer's rendezvous."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def arguments(usage):
    """The test's command line, ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...], and the source tree's root."""
    if len(sys.argv) < 3:
        sys.exit(usage)
    return sys.argv[1], sys.argv[2:], Path(__file__).resolve().parents[3]
