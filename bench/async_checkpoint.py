#!/usr/bin/env python3
"""checkpoint.async_save: how long a save blocks training, against the synchronous save, on a model
whose optimizer state is at least 1 GiB per rank.

GPT-2 124M's shape (124M parameters: 12 bytes each of fp32 master weights and Adam moments, 1.49 GB
per rank at ZeRO stage 0) on 2 ranks, short sequences so that steps are quick; a save every
--interval steps. Runs with and without async_save alternate (interleaved rounds). From rank 0's
log: the time each save blocked the step (synchronous: `written in S s`; asynchronous: `the state
copied in S s`, which includes waiting for a previous save still in flight) and the background
write time (`written in the background in S s`); from metrics.jsonl, the median step time of
each run (steps during a background write included).

  bench/async_checkpoint.py [--rounds 3] [--steps 10] [--interval 5]
Writes bench/results/async_checkpoint.md.
"""
import argparse
import re
import statistics
import tempfile

import perf_common as pc

SHAPE = ["model.preset=none", "model.n_layer=12", "model.n_head=12", "model.n_embd=768", "model.vocab_size=50257",
         "model.block_size=1024"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--stage", type=int, default=0)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--interval", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    common = SHAPE + [f"zero_optimization.stage={args.stage}", "train.train_micro_batch_size_per_gpu=1",
                      f"data.seq_len={args.seq_len}", "train.device=cpu", "train.sample_interval=0",
                      "checkpoint.keep_last=1"]
    blocked = {False: [], True: []}
    background, steps = [], {False: [], True: []}
    prefix = pc.launcher_prefix(args.ranks)
    for r in range(args.rounds):
        for async_save in (False, True) if r % 2 == 0 else (True, False):
            with tempfile.TemporaryDirectory() as run_dir:
                # run_zerotrain turns checkpoints off; the later --set wins.
                records, log = pc.run_zerotrain(prefix, common + [f"checkpoint.interval={args.interval}",
                                                                  f"checkpoint.async_save={str(async_save).lower()}"],
                                                args.steps, run_dir)
            pattern = r"the state copied in ([0-9.]+) s" if async_save else r"\) written in ([0-9.]+) s"
            found = [float(x) for x in re.findall(pattern, log)]
            if len(found) != args.steps // args.interval:
                raise SystemExit(f"expected {args.steps // args.interval} saves in the log, found {found}:\n{log[-3000:]}")
            blocked[async_save] += found
            if async_save:
                background += [float(x) for x in re.findall(r"written in the background in ([0-9.]+) s", log)]
            steps[async_save].append(statistics.median(x["step_ms"] for x in records[1:]))
            print(f"round {r + 1} async_save {async_save}: blocked {found} s", flush=True)

    sync_s, async_s = statistics.median(blocked[False]), statistics.median(blocked[True])
    lines = pc.header("Asynchronous checkpoints: the time a save blocks the step", [
        f"command: bench/async_checkpoint.py --ranks {args.ranks} --stage {args.stage} --seq-len {args.seq_len} "
        f"--steps {args.steps} --interval {args.interval} --rounds {args.rounds}",
        f"GPT-2 124M's shape (124,475,904 parameters), fp32, ZeRO stage {args.stage}, {args.ranks} ranks, micro batch "
        f"1 x {args.seq_len}; optimizer state {124475904 * 12 / 2**30 / (1 if args.stage == 0 else args.ranks):.2f} GiB "
        f"per rank; a save every {args.interval} steps, keep_last 1; checkpoint.dir on the machine's disk"])
    lines += ["", "| | synchronous | asynchronous |", "| --- | ---: | ---: |",
              f"| step blocked per save, median (s) | {sync_s:.3f} | {async_s:.3f} |",
              f"| every save (s) | {', '.join(f'{x:.2f}' for x in blocked[False])} | "
              f"{', '.join(f'{x:.3f}' for x in blocked[True])} |",
              f"| background write, median (s) | - | {statistics.median(background):.3f} |",
              f"| median step time, saves excluded (ms) | {statistics.median(steps[False]):.0f} | "
              f"{statistics.median(steps[True]):.0f} |",
              "", f"Blocked, asynchronous / synchronous: {async_s / sync_s:.3f}"]
    pc.write_results(pc.ROOT / "bench" / "results" / "async_checkpoint.md", lines)


if __name__ == "__main__":
    main()
