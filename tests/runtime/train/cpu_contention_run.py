#!/usr/bin/env python3
"""A rank that shares its core with another process says so, in a real 2-rank job under mpirun.

Each rank is bound to a core of its own (rank r to CPU r, as zt-run and Open MPI bind one rank per
core when ranks equal cores) and a busy loop is bound to rank 0's core, so rank 0's threads get
about half of it. Rank 0 must warn once that its threads waited for a CPU, naming its binding and
`--bind-to none`; metrics.jsonl must carry the wait (cpu_wait_ms), large in that run.

Usage: cpu_contention_run.py ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tiny_shards import prepare_tiny_shards
from train_job import arguments, fail, train_two_ranks

STEPS = 80


def main():
    zerotrain, mpirun, source = arguments(__doc__)
    if len(os.sched_getaffinity(0)) < 2 or not shutil.which("taskset"):
        print("SKIP: needs 2 CPUs and taskset (util-linux) to bind 2 ranks")
        sys.exit(77)
    first, second = sorted(os.sched_getaffinity(0))[:2]
    sets = ["train.eval_interval=0", "train.sample_interval=0", "checkpoint.interval=0", f"train.steps={STEPS}",
            "data.val_files="]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sets.append("data.train_files=" + prepare_tiny_shards(zerotrain, work, "line {i}: a busy neighbour", 300))
        # Rank r runs bound to its CPU; the neighbour spins on rank 0's for the whole run.
        bind = work / "bind.sh"
        bind.write_text(f'#!/bin/sh\ncase "$OMPI_COMM_WORLD_RANK" in 0) cpu={first} ;; *) cpu={second} ;; esac\n'
                        f'exec taskset -c "$cpu" "{zerotrain}" "$@"\n')
        bind.chmod(0o755)
        neighbour = subprocess.Popen(["taskset", "-c", str(first), "sh", "-c", "while :; do :; done"])
        try:
            rows, log = train_two_ranks(bind, mpirun, source / "configs/default.yaml", sets, work / "run")
        finally:
            neighbour.kill()
            neighbour.wait()
    everyone = [line for line in log.splitlines() if "ms for a CPU in" in line]
    print("\n".join(everyone))
    # Rank 1 has a core to itself; on a machine busy with other work it may warn too, which is right.
    warnings = [line for line in everyone if line.startswith("[zt rank 0 warn]")]
    if len(warnings) != 1:
        fail(f"expected one warning from rank 0 about waiting for a CPU, got {everyone}:\n{log[-3000:]}")
    if not re.search(rf"bound to CPU {first} of \d+.*--bind-to none", warnings[0]):
        fail(f"the warning does not name the binding and the remedy: {warnings[0]}")
    share = float(re.search(r"ms of steps \((\d+)% of", warnings[0]).group(1))
    if share < 20:
        fail(f"rank 0 shared its core with a busy loop but reports waiting only {share}% of the time")
    waits = [r.get("cpu_wait_ms") for r in rows]
    if any(w is None for w in waits):
        fail("metrics.jsonl has steps without cpu_wait_ms")
    total_wait, total_step = sum(waits[1:]), sum(r["step_ms"] for r in rows[1:])
    print(f"rank 0 waited {total_wait:.0f} of {total_step:.0f} ms")
    if total_wait < 0.2 * total_step:
        fail(f"cpu_wait_ms sums to {total_wait:.0f} of {total_step:.0f} ms beside a busy loop on the same core")


if __name__ == "__main__":
    main()
