#!/usr/bin/env python3
"""DeepSpeed configs run with DeepSpeed's meaning, held against DeepSpeed's own code (from PyPI).

Each case is a ds_config.json of a kind found in the wild (no scheduler; WarmupLR with its default
log warmup; WarmupDecayLR without warmup_max_lr; WarmupCosineLR with its ratios and torch_adam;
the Hugging Face Trainer's "auto" everywhere, with a zerotrain YAML giving the values; fp16 with
the loss scaler left to its defaults; fp16 whose first steps overflow, which DeepSpeed's engine
does not count in its scheduler). For each, DeepSpeed's side comes from DeepSpeed itself:
deepspeed.runtime.config.DeepSpeedConfig parses the file (batch sizes, clipping, precision, loss
scaling, ZeRO stage, communication dtype), the optimizer's defaults are those of the class
DeepSpeed's engine builds (FusedAdam, or torch.optim.AdamW with torch_adam), and the learning
rate of every step is read from DeepSpeed's scheduler class, stepped the way DeepSpeed's engine
steps it (built before the first step, stepped after each). zerotrain's side is the resolved
config of `zerotrain config` and the `lr` of every step of a real training run (metrics.jsonl;
a 2-rank run under mpirun where the file's batch needs 2 ranks). Both are printed side by side;
any difference fails.

Usage: deepspeed_semantics.py ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
"""
import inspect
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import yaml

STEPS = 14  # training steps of the cases whose file does not set total_num_steps

CASES = [
    # A GAN's config: Adam at 2e-4, nothing else said. DeepSpeed: a constant rate, no decay.
    ("no_scheduler", 1, {
        "train_micro_batch_size_per_gpu": 2,
        "optimizer": {"type": "Adam", "params": {"lr": 2e-4, "betas": [0.5, 0.999]}},
    }, None),
    # WarmupLR's warmup is logarithmic unless said; warmup_max_lr wins over the optimizer's lr.
    ("warmup_lr_log", 1, {
        "train_micro_batch_size_per_gpu": 2, "gradient_clipping": 0.0,
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "weight_decay": 0.01}},
        "scheduler": {"type": "WarmupLR", "params": {"warmup_max_lr": 2e-3, "warmup_num_steps": 8}},
    }, None),
    # WarmupDecayLR without warmup_max_lr peaks at DeepSpeed's 0.001, not at params.lr; the batch
    # of 8 needs 2 ranks.
    ("warmup_decay_default_peak", 2, {
        "train_batch_size": 8, "train_micro_batch_size_per_gpu": 2, "gradient_clipping": 0.5,
        "optimizer": {"type": "Adam", "params": {"lr": 5e-5}},
        "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": 1e-6, "warmup_num_steps": 5,
                                                          "warmup_type": "linear", "total_num_steps": 16}},
        "zero_optimization": {"stage": 2},
    }, None),
    # WarmupCosineLR: ratios of the optimizer's rate (cos_min_ratio left to its default); torch_adam
    # gives torch.optim.AdamW's weight decay default.
    ("warmup_cosine_ratios", 1, {
        "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2,
        "optimizer": {"type": "AdamW", "params": {"lr": 3e-3, "betas": [0.9, 0.95], "eps": 1e-6,
                                                  "torch_adam": True}},
        "scheduler": {"type": "WarmupCosineLR", "params": {"total_num_steps": 16, "warmup_num_steps": 4,
                                                           "warmup_min_ratio": 0.1}},
    }, None),
    # The Hugging Face Trainer's template: "auto" everywhere. The Trainer fills them from its
    # arguments; zerotrain from its config, here a YAML. DeepSpeed's side gets the values the
    # Trainer would write for those arguments.
    ("hf_trainer_auto", 1, {
        "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto", "fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"},
        "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto",
                                                  "weight_decay": "auto"}},
        "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                                                          "warmup_num_steps": "auto", "total_num_steps": "auto"}},
        "zero_optimization": {"stage": 1},
    }, {"train": {"train_micro_batch_size_per_gpu": 3, "gradient_accumulation_steps": 2, "gradient_clipping": 0.7,
                  "steps": 12},
        "optimizer": {"lr": 4e-4, "betas": [0.9, 0.98], "eps": 1e-7, "weight_decay": 0.05},
        "scheduler": {"type": "warmup_linear", "warmup_steps": 3}}),
    # fp16 with the loss scaler left to DeepSpeed's defaults; communication in the compute dtype.
    ("fp16_defaults", 1, {"train_micro_batch_size_per_gpu": 2, "fp16": {"enabled": True}}, None),
    # A scale far too high: the first steps overflow and are skipped, and DeepSpeed's engine does not
    # step its scheduler after a skipped step, so the warmup waits for them.
    ("fp16_overflow_holds_the_schedule", 1, {
        "train_micro_batch_size_per_gpu": 2, "fp16": {"enabled": True, "initial_scale_power": 20},
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-3}},
        "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 6, "warmup_type": "linear"}},
    }, None),
]


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def hf_trainer_fill(config, values):
    """The Trainer's "auto" filling (transformers' HfTrainerDeepSpeedConfig) for the YAML's values."""
    train, opt, sched = values["train"], values["optimizer"], values["scheduler"]
    filled = json.loads(json.dumps(config))
    filled.update(train_micro_batch_size_per_gpu=train["train_micro_batch_size_per_gpu"],
                  gradient_accumulation_steps=train["gradient_accumulation_steps"],
                  train_batch_size=train["train_micro_batch_size_per_gpu"] * train["gradient_accumulation_steps"],
                  gradient_clipping=train["gradient_clipping"], fp16={"enabled": False}, bf16={"enabled": False})
    filled["optimizer"]["params"] = {"lr": opt["lr"], "betas": opt["betas"], "eps": opt["eps"],
                                     "weight_decay": opt["weight_decay"]}
    filled["scheduler"]["params"] = {"warmup_min_lr": 0, "warmup_max_lr": opt["lr"],
                                     "warmup_num_steps": sched["warmup_steps"], "total_num_steps": train["steps"]}
    return filled


class DataParallel:
    """The mpu DeepSpeedConfig asks for the data-parallel world size."""

    def __init__(self, world):
        self.world = world

    def get_data_parallel_world_size(self):
        return self.world


def deepspeed_side(config, world, steps, skipped):
    """What DeepSpeed runs for `config`: its parsed settings and the rate of each step."""
    import torch
    import deepspeed.runtime.config as ds_config
    from deepspeed.ops.adam.fused_adam import FusedAdam
    from deepspeed.runtime import lr_schedules
    ds_config.dist.get_rank = lambda: 0  # no process group: the world size comes from the mpu
    parsed = ds_config.DeepSpeedConfig(json.loads(json.dumps(config)), mpu=DataParallel(world))
    fp16 = parsed.float16_config
    side = {"micro batch": parsed.train_micro_batch_size_per_gpu,
            "accumulation": parsed.gradient_accumulation_steps,
            "clipping": parsed.gradient_clipping,
            "dtype": "fp16" if fp16.enabled else "bf16" if parsed.bfloat16_config.enabled else "fp32",
            "stage": parsed.zero_optimization_stage,
            "communication": parsed.communication_data_type or "compute"}
    if fp16.enabled:
        side.update({"loss scale": fp16.loss_scale, "initial scale power": fp16.initial_scale_power,
                     "scale window": fp16.loss_scale_window, "hysteresis": fp16.hysteresis,
                     "min scale": fp16.min_loss_scale})
    if parsed.optimizer_name is None:  # the training script's optimizer: DeepSpeed says nothing of it
        return side
    params = dict(parsed.optimizer_params or {})
    optimizer_class = torch.optim.AdamW if params.pop("torch_adam", False) else FusedAdam
    defaults = {k: v.default for k, v in inspect.signature(optimizer_class.__init__).parameters.items()}
    for key in ("lr", "betas", "eps", "weight_decay"):
        side[key] = params.get(key, defaults[key])
    side["betas"] = list(side["betas"])
    probe = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=side["lr"])
    scheduler = None
    if parsed.scheduler_name:
        scheduler = getattr(lr_schedules, parsed.scheduler_name)(probe, **parsed.scheduler_params)
    rates = []
    for step in range(steps):  # the engine: optimizer step at the group's rate, then scheduler.step()
        rates.append(float(probe.param_groups[0]["lr"]))
        if scheduler is not None and not skipped[step]:  # not after a step skipped for overflow
            scheduler.step()
    side["rates"] = rates
    if scheduler is not None:
        del side["lr"]  # the scheduler sets the optimizer's rate: the rates above are what counts
    return side


def zerotrain_side(zerotrain, mpirun, work, name, world, yaml_values):
    """zerotrain's resolved config for the file and the rate of each step of a real run."""
    ds_file = work / f"{name}.json"
    command = ["--deepspeed", ds_file]
    if yaml_values is not None:
        (work / f"{name}.yaml").write_text(yaml.safe_dump(yaml_values))
        command += ["--config", work / f"{name}.yaml"]
    env = dict(os.environ, OMPI_COMM_WORLD_SIZE=str(world), OMPI_COMM_WORLD_RANK="0")
    result = subprocess.run([zerotrain, "config", *command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)
    if result.returncode != 0:
        fail(f"{name}: zerotrain config failed:\n{result.stdout}")
    resolved = yaml.safe_load(result.stdout.split("# zerotrain config, fully resolved")[1].split("\n", 1)[1])
    train, opt, precision, zero = (resolved[k] for k in ("train", "optimizer", "precision", "zero_optimization"))
    side = {"micro batch": train["train_micro_batch_size_per_gpu"], "accumulation": train["gradient_accumulation_steps"],
            "clipping": train["gradient_clipping"], "dtype": precision["dtype"], "stage": zero["stage"],
            "communication": zero["communication_data_type"], "lr": opt["lr"], "betas": opt["betas"],
            "eps": opt["eps"], "weight_decay": opt["weight_decay"]}
    if precision["dtype"] == "fp16":
        side.update({"loss scale": precision["loss_scale"], "initial scale power": precision["initial_scale_power"],
                     "scale window": precision["loss_scale_window"], "hysteresis": precision["hysteresis"],
                     "min scale": precision["min_loss_scale"]})
    run_dir = work / f"{name}_run"
    launcher = [*mpirun, "-np", str(world)] if world > 1 else []
    run = [*launcher, zerotrain, "train", *command, "--set", "model.type=mlp", "--set", "train.device=cpu",
           "--set", "train.eval_interval=0", "--set", "checkpoint.interval=0", "--set", f"logging.run_dir={run_dir}"]
    result = subprocess.run(run, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        fail(f"{name}: the training run failed:\n{result.stdout}")
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if "step" in r and "lr" in r]
    side["rates"] = [r["lr"] for r in steps]
    side["skipped"] = [r["skipped"] for r in steps]
    return side, train["steps"]


def same(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    return str(a) == str(b)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    zerotrain, mpirun = sys.argv[1], sys.argv[2:]
    warnings.filterwarnings("ignore")
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, world, config, yaml_values in CASES:
            if "total_num_steps" not in json.dumps(config) and yaml_values is None:
                # A run needs a length; a file without a schedule's total leaves it to the YAML.
                yaml_values = {"train": {"steps": STEPS}}
            (work / f"{name}.json").write_text(json.dumps(config))
            ours, steps = zerotrain_side(zerotrain, mpirun, work, name, world, yaml_values)
            reference = hf_trainer_fill(config, yaml_values) if name == "hf_trainer_auto" else config
            theirs = deepspeed_side(reference, world, steps, ours["skipped"])
            if "overflow" in name and not any(ours["skipped"]):
                fail(f"{name}: no step overflowed, so the case shows nothing")
            print(f"\n{name} ({world} rank{'s' if world > 1 else ''}, {steps} steps)")
            print(f"  {'':22} {'DeepSpeed':>24} {'zerotrain':>24}")
            for key in theirs:
                if key not in ours:
                    continue
                if key == "rates":
                    for step, (a, b) in enumerate(zip(theirs[key], ours[key]), start=1):
                        mark = "" if same(a, b) else "   <- differs"
                        print(f"  lr at step {step:<11} {a:>24.17g} {b:>24.17g}{mark}")
                    if not same(theirs[key], ours[key]):
                        problems.append(f"{name}: the rates differ")
                    continue
                mark = "" if same(theirs[key], ours[key]) else "   <- differs"
                print(f"  {key:22} {str(theirs[key]):>24} {str(ours[key]):>24}{mark}")
                if mark:
                    problems.append(f"{name}: {key} is {ours[key]} in zerotrain, {theirs[key]} in DeepSpeed")
    if problems:
        fail("\n  ".join(["zerotrain runs these files differently from DeepSpeed:", *problems]))
    print("\nPASS: every case runs with DeepSpeed's batch sizes, clipping, precision, optimizer settings and rates")


if __name__ == "__main__":
    main()
