#!/usr/bin/env python3
"""Activation checkpointing (train.activation_checkpointing): the activation memory it saves and the
step time it costs, at the published shapes of GPT-2 124M and SmolLM-135M (a Llama), ZeRO stage 2.

For each model, runs with and without it alternate (interleaved rounds) on the same ranks, data and
seed; each run trains --steps steps. Reported per model: the activations each run allocated
(mem_activations in metrics.jsonl, exact bytes), their ratio, the median step time (first step of
every run left out) and its ratio, and whether every step's loss is bit for bit the same.

  bench/activation_checkpointing.py [--models gpt2-124m,smollm-135m] [--rounds 2] [--steps 3]
Needs data/fortunes (zerotrain prepare-data; byte-level tokens are valid ids of either vocabulary).
Writes bench/results/activation_checkpointing_<dtype>.md.
"""
import argparse
import statistics
import tempfile

import perf_common as pc

# (config, overrides): GPT-2 124M's shape over the default config; SmolLM-135M's preset over the
# Llama config (whose tie_embeddings: true and qk_norm: false are SmolLM's too).
SHAPES = {
    "gpt2-124m": ("configs/default.yaml", ["model.preset=none", "model.n_layer=12", "model.n_head=12",
                                           "model.n_embd=768", "model.vocab_size=50257", "model.block_size=1024"]),
    "smollm-135m": ("configs/llama-tiny.yaml", ["model.preset=smollm-135m"]),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="gpt2-124m,smollm-135m")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--stage", type=int, default=2)
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    models = args.models.split(",")
    common = [f"zero_optimization.stage={args.stage}", f"train.train_micro_batch_size_per_gpu={args.micro_batch}",
              f"data.seq_len={args.seq_len}", f"precision.dtype={args.dtype}", "train.device=cpu",
              "train.gradient_accumulation_steps=1", "train.sample_interval=0"]
    # results[model][every] = list of (step medians per run, activations, losses)
    results = {m: {0: [], 1: []} for m in models}
    prefix = pc.launcher_prefix(args.ranks)
    for r in range(args.rounds):
        for model in models:
            for every in (0, 1) if r % 2 == 0 else (1, 0):
                with tempfile.TemporaryDirectory() as run_dir:
                    config, shape = SHAPES[model]
                    records, _ = pc.run_zerotrain(prefix, shape + common + [f"train.activation_checkpointing={every}"],
                                                  args.steps, run_dir, config=config)
                step_ms = statistics.median(x["step_ms"] for x in records[1:])
                results[model][every].append((step_ms, records[-1]["mem_activations"], [x["loss"] for x in records]))
                print(f"round {r + 1} {model} checkpointing {every}: {step_ms:.0f} ms/step", flush=True)

    lines = pc.header(f"Activation checkpointing: memory saved and time paid (ZeRO stage {args.stage}, {args.dtype})", [
        f"command: bench/activation_checkpointing.py --models {args.models} --ranks {args.ranks} --stage {args.stage} "
        f"--micro-batch {args.micro_batch} --seq-len {args.seq_len} --dtype {args.dtype} --steps {args.steps} "
        f"--rounds {args.rounds}",
        f"{args.ranks} ranks (launch/zt-run), micro batch {args.micro_batch} x {args.seq_len} per rank; runs with and "
        f"without alternate, {args.rounds} rounds of {args.steps} steps; step time: the median over rounds of each "
        "run's median step (its first step left out)"])
    lines += ["", "| model | activations off | activations on | on/off | step off (ms) | step on (ms) | on/off | "
              "losses bitwise equal |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for model in models:
        off, on = results[model][0], results[model][1]
        step_off = statistics.median(x[0] for x in off)
        step_on = statistics.median(x[0] for x in on)
        act_off, act_on = off[0][1], on[0][1]
        equal = all(a[2] == b[2] for a in off for b in on)
        lines.append(f"| {model} | {act_off / 2**20:.1f} MiB | {act_on / 2**20:.1f} MiB | {act_on / act_off:.3f} | "
                     f"{step_off:.0f} | {step_on:.0f} | {step_on / step_off:.3f} | {'yes' if equal else 'NO'} |")
    pc.write_results(pc.ROOT / "bench" / "results" / f"activation_checkpointing_{args.dtype}.md", lines)


if __name__ == "__main__":
    main()
