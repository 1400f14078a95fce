#!/usr/bin/env python3
"""The fused CPU kernels against the passes they replace, at the shapes of the bench models' blocks.

Runs zt_bench_cpu_fusion (bench/cpu_fusion.cpp; build it with
`cmake --build build --target zt_bench_cpu_fusion`, or name it with $ZT_FUSION_BIN) for each
model's N = micro batch x T rows and width C, on one thread, fused and unfused alternating; the
classifier over a vocabulary of --vocab (default GPT-2's 50257, padded to 50304: the bench models'
own byte-level vocabulary of 256 would make it negligible).

  bench/cpu_fusion.py --models small,wide
Writes bench/results/cpu_fusion.md.
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

import perf_common as pc

ROOT = pc.ROOT


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="small,wide")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--output")
    args = parser.parse_args()
    binary = os.environ.get("ZT_FUSION_BIN", str(ROOT / "build" / "models" / "zt_bench_cpu_fusion"))
    if not Path(binary).exists():
        sys.exit(f"{binary} not found: build the zt_bench_cpu_fusion target or set ZT_FUSION_BIN")
    loads, tables = [], []
    for model in args.models.split(","):
        m = pc.MODELS[model]
        loads.append(pc.load_average().split()[0])
        out = subprocess.run([binary, str(m["micro_batch"] * m["block_size"]), str(m["n_embd"]), str(args.repeats),
                              str(args.vocab)],
                             capture_output=True, text=True, check=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
        tables += ["", f"## {model}", "", out.stdout.rstrip()]
        print(f"{model}:\n{out.stdout}", file=sys.stderr)
    lines = pc.header("Fused CPU kernels vs the passes they replace", [
        f"binary {binary} (built from the same checkout as the zerotrain binary above); one thread",
        f"each op: fused and unfused alternating, {args.repeats} times each; medians in ms per call "
        "(a block calls each once per micro-batch, so x n_layer per step; the classifier once per step, "
        f"over a vocabulary of {args.vocab})",
        f"load averages (1 min) before each model: {', '.join(loads)}"]) + tables
    pc.write_results(args.output or ROOT / "bench" / "results" / "cpu_fusion.md", lines)


if __name__ == "__main__":
    main()
