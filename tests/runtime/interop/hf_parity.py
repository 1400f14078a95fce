#!/usr/bin/env python3
"""zerotrain against Hugging Face transformers (real torch, transformers and safetensors from PyPI).

Cases (one per CTest test):
  export     zerotrain trains a tiny GPT-2 (vocab 1100, padded to 1152 inside zerotrain) on 2 ranks,
             `zerotrain export --format hf` writes a directory, AutoModelForCausalLM.from_pretrained
             loads it with no missing or unexpected keys, and its loss on the training batch equals
             the loss zerotrain logged for those weights.
  export_bf16  the GPT-2 of `export` trained in bf16: the directory holds BF16 tensors and
             torch_dtype bfloat16, each tensor is exactly the bf16 rounding of the checkpoint's fp32
             master weights, from_pretrained(torch_dtype="auto") loads a bf16 model, and its loss
             on the batch is zerotrain's within bf16's rounding.
  export_llama  the same for a tiny Llama (grouped-query attention, untied head, Llama 3 RoPE
             scaling) and transformers' LlamaForCausalLM.
  init_from_llama  a random LlamaForCausalLM starts a run whose config names only model.init_from
             (type and shape from its config.json): the first step agrees with PyTorch.
  eval_sample, eval_sample_llama, eval_sample_bpe  zerotrain trains a byte-level GPT-2 (Llama; a
             GPT-2 with a GPT-2-style BPE) on prepared text and exports it with its tokenizer;
             AutoTokenizer reads text as the run's data was read, generation_config.json names the
             end-of-text token, transformers scores the validation windows `zerotrain eval` scores
             with the loss eval printed, and its greedy generate() continues a prompt with the text
             `zerotrain sample --temperature 0` printed.
  init_from  a randomly initialised transformers GPT-2, saved with save_pretrained, starts a
             zerotrain run (model.init_from, shape keys taken from its config.json, ZeRO stage 3
             on 2 ranks); 10 AdamW steps of zerotrain and of PyTorch on the same batch agree step by
             step (loss and gradient norm), fp32 both.

The data is one shard holding exactly one global batch of windows, so every step of either side
sees the same batch (the loss is a mean over the batch, so the order of its rows does not matter).

Usage: hf_parity.py CASE ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel

RANKS = 2
B, T = 2, 16  # per rank
VOCAB, N_LAYER, N_HEAD, N_EMBD = 1100, 2, 4, 32
STEPS = 10
LR, BETAS, EPS, WD, CLIP = 1e-3, (0.9, 0.95), 1e-8, 0.1, 1.0


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def write_shard(path, tokens):
    """An llm.c token shard: 256 int32 header (magic, version, count), then uint16 tokens."""
    header = np.zeros(256, dtype="<i4")
    header[0], header[1], header[2] = 20240520, 1, len(tokens)
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(np.asarray(tokens, dtype="<u2").tobytes())


def make_batch(work):
    """One shard of exactly RANKS*B windows of T+1 tokens; returns (inputs, targets) as (G, T)."""
    rng = np.random.default_rng(7)
    windows = RANKS * B
    tokens = rng.integers(0, VOCAB, size=windows * T + 1)
    write_shard(work / "train_000.bin", tokens)
    rows = np.stack([tokens[k * T:k * T + T + 1] for k in range(windows)])
    return torch.from_numpy(rows[:, :-1].astype(np.int64)), torch.from_numpy(rows[:, 1:].astype(np.int64))


def write_config(path, extra_model=""):
    path.write_text(f"""
model:
  type: gpt2
{extra_model}
data:
  train_files: "{path.parent}/train_*.bin"
  val_files: ""
  seq_len: {T}
train:
  device: cpu
  train_micro_batch_size_per_gpu: {B}
  steps: {STEPS}
  eval_interval: 0
  gradient_clipping: {CLIP}
optimizer:
  lr: {LR}
  betas: [{BETAS[0]}, {BETAS[1]}]
  eps: {EPS}
  weight_decay: {WD}
  no_decay_bias_and_norm: true
  no_decay_embeddings: false
scheduler:
  type: constant
precision:
  dtype: fp32
logging:
  run_dir: "{path.parent}/run"
""")


def run(args, log):
    result = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    Path(log).write_text(result.stdout)
    if result.returncode != 0:
        print(result.stdout)
        fail(f"{' '.join(map(str, args[:6]))} ... exited {result.returncode}")
    return result.stdout


def metrics(run_dir):
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [r for r in records if "loss" in r]


def batch_loss(model, inputs, targets):
    logits = model(input_ids=inputs).logits
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def check_close(what, got, want, tol):
    print(f"{what}: zerotrain {want:.9g} transformers {got:.9g} (diff {abs(got - want):.2e}, tolerance {tol:g})")
    if not abs(got - want) <= tol:
        fail(f"{what} differs: zerotrain {want!r}, transformers {got!r}")


def case_export(zerotrain, mpirun, work):
    inputs, targets = make_batch(work)
    config = work / "train.yaml"
    write_config(config, f"  preset: none\n  n_layer: {N_LAYER}\n  n_head: {N_HEAD}\n  n_embd: {N_EMBD}\n"
                         f"  vocab_size: {VOCAB}\n  block_size: {T}\n  init_seed: 3\n"
                         "checkpoint:\n  interval: 3\n  keep_last: 0")
    run([*mpirun, "-np", str(RANKS), zerotrain, "train", "--config", config, "--set", "train.steps=4",
         "--set", "zero_optimization.stage=2"], work / "train.log")
    out = work / "hf"
    run([zerotrain, "export", "--checkpoint", work / "run/checkpoints/step_00000003", "--format", "hf",
         "--output", out], work / "export.log")

    hf_config = json.loads((out / "config.json").read_text())
    expected = {"model_type": "gpt2", "vocab_size": VOCAB, "n_layer": N_LAYER, "n_head": N_HEAD, "n_embd": N_EMBD,
                "n_positions": T, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
                "tie_word_embeddings": True}
    for key, value in expected.items():
        if hf_config.get(key) != value:
            fail(f"config.json: {key} is {hf_config.get(key)!r}, expected {value!r}")

    model, info = AutoModelForCausalLM.from_pretrained(out, output_loading_info=True, attn_implementation="eager")
    for kind in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs"):
        if info[kind]:
            fail(f"from_pretrained reports {kind}: {info[kind]}")
    if tuple(model.transformer.wte.weight.shape) != (VOCAB, N_EMBD):
        fail(f"wte has shape {tuple(model.transformer.wte.weight.shape)}, expected {(VOCAB, N_EMBD)}")
    if model.lm_head.weight.data_ptr() != model.transformer.wte.weight.data_ptr():
        fail("the LM head is not tied to wte")
    model.eval()
    with torch.no_grad():
        loss = batch_loss(model, inputs, targets).item()
    # The loss logged at step 4 is the loss of the weights after 3 updates: the exported ones.
    want = next(r["loss"] for r in metrics(work / "run") if r["step"] == 4)
    check_close("loss of the exported weights", loss, want, 2e-6)


def case_export_bf16(zerotrain, mpirun, work):
    from safetensors.torch import load_file
    inputs, targets = make_batch(work)
    config = work / "train.yaml"
    write_config(config, f"  preset: none\n  n_layer: {N_LAYER}\n  n_head: {N_HEAD}\n  n_embd: {N_EMBD}\n"
                         f"  vocab_size: {VOCAB}\n  block_size: {T}\n  init_seed: 3\n"
                         "checkpoint:\n  interval: 3\n  keep_last: 0")
    config.write_text(config.read_text().replace("dtype: fp32", "dtype: bf16"))
    run([*mpirun, "-np", str(RANKS), zerotrain, "train", "--config", config, "--set", "train.steps=4",
         "--set", "zero_optimization.stage=2"], work / "train.log")
    checkpoint = work / "run/checkpoints/step_00000003"
    out = work / "hf"
    run([zerotrain, "export", "--checkpoint", checkpoint, "--format", "hf", "--output", out], work / "export.log")
    run([zerotrain, "export", "--checkpoint", checkpoint, "--output", work / "master.safetensors"],
        work / "export_master.log")
    if json.loads((out / "config.json").read_text()).get("torch_dtype") != "bfloat16":
        fail("config.json's torch_dtype is not bfloat16")
    exported, master = load_file(out / "model.safetensors"), load_file(work / "master.safetensors")
    if {t.dtype for t in exported.values()} != {torch.bfloat16}:
        fail(f"the exported tensors are {sorted({str(t.dtype) for t in exported.values()})}, not bfloat16")
    # Two tensors in the same layout on both sides: the embedding (its first VOCAB rows) and ln_f.
    for hf_name, zt_name, rows in (("transformer.wte.weight", "embedding.wte", VOCAB),
                                   ("transformer.ln_f.weight", "head.ln_f.weight", None)):
        want = master[zt_name][:rows].to(torch.bfloat16)
        if not torch.equal(exported[hf_name], want):
            fail(f"{hf_name} is not the bf16 rounding of the master weights {zt_name}")
    model = AutoModelForCausalLM.from_pretrained(out, torch_dtype="auto", attn_implementation="eager")
    if model.dtype != torch.bfloat16:
        fail(f"from_pretrained(torch_dtype='auto') loaded {model.dtype}")
    model.eval()
    with torch.no_grad():
        loss = batch_loss(model, inputs, targets).float().item()
    want = next(r["loss"] for r in metrics(work / "run") if r["step"] == 4)
    # Both are the loss of the same bf16 weights computed with bf16 activations, rounded at
    # different places (zerotrain once per op output, PyTorch inside its kernels too): a few bf16
    # epsilons (2^-8 relative) of a loss near ln(1100) = 7.
    check_close("loss of the exported bf16 weights", loss, want, 0.05)


def case_export_llama(zerotrain, mpirun, work):
    inputs, targets = make_batch(work)
    config = work / "train.yaml"
    write_config(config, f"  preset: none\n  n_layer: 2\n  n_head: 4\n  n_kv_head: 2\n  n_embd: 32\n"
                         f"  intermediate_size: 88\n  vocab_size: {VOCAB}\n  block_size: {T}\n  init_seed: 3\n"
                         "  tie_embeddings: false\n  rope_theta: 500000\n  rope_scaling_factor: 8\n"
                         "  rope_original_max_position: 8\n"
                         "checkpoint:\n  interval: 3\n  keep_last: 0")
    config.write_text(config.read_text().replace("type: gpt2", "type: llama"))
    run([*mpirun, "-np", str(RANKS), zerotrain, "train", "--config", config, "--set", "train.steps=4",
         "--set", "zero_optimization.stage=3"], work / "train.log")
    out = work / "hf"
    run([zerotrain, "export", "--checkpoint", work / "run/checkpoints/step_00000003", "--format", "hf",
         "--output", out], work / "export.log")
    hf_config = json.loads((out / "config.json").read_text())
    for key, value in {"model_type": "llama", "vocab_size": VOCAB, "num_hidden_layers": 2, "num_attention_heads": 4,
                       "num_key_value_heads": 2, "hidden_size": 32, "intermediate_size": 88,
                       "tie_word_embeddings": False}.items():
        if hf_config.get(key) != value:
            fail(f"config.json: {key} is {hf_config.get(key)!r}, expected {value!r}")
    model, info = AutoModelForCausalLM.from_pretrained(out, output_loading_info=True, attn_implementation="eager")
    for kind in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs"):
        if info[kind]:
            fail(f"from_pretrained reports {kind}: {info[kind]}")
    model.eval()
    with torch.no_grad():
        loss = batch_loss(model, inputs, targets).item()
    want = next(r["loss"] for r in metrics(work / "run") if r["step"] == 4)
    check_close("loss of the exported Llama weights", loss, want, 2e-6)


def read_shard_tokens(path):
    header = np.fromfile(path, dtype="<i4", count=256)
    return np.fromfile(path, dtype="<u2", offset=1024, count=int(header[2]))


def case_eval_sample(zerotrain, mpirun, work, family="gpt2", bpe=False):
    """eval and sample against transformers on an exported checkpoint (see the module docstring)."""
    seq_len, batch, new_tokens = 32, 2, 24
    text = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n\n" for i in range(300))
    (work / "text.txt").write_text(text)
    fixtures = Path(__file__).resolve().parents[1] / "data/fixtures"
    tokenizer_files = ["--vocab", fixtures / "tiny_vocab.json", "--merges", fixtures / "tiny_merges.txt"] if bpe else []
    run([zerotrain, "prepare-data", "--input", work / "text.txt", "--output", work / "data", "--val-fraction", "0.2",
         *(["--tokenizer", "gpt2", *tokenizer_files] if bpe else [])], work / "prepare.log")
    shape = ("  type: llama\n  preset: none\n  n_layer: 2\n  n_head: 4\n  n_kv_head: 2\n  n_embd: 64\n"
             "  intermediate_size: 176\n  vocab_size: 256\n  block_size: 64\n  tie_embeddings: false"
             if family == "llama" else "  preset: tiny" + ("\n  vocab_size: 268" if bpe else ""))
    config = work / "train.yaml"
    write_config(config, shape + "\ncheckpoint:\n  interval: 40\n  keep_last: 0")
    text_config = config.read_text().replace("  type: gpt2\n", "", 1)
    text_config = text_config.replace(f'train_files: "{work}/train_*.bin"', f'train_files: "{work}/data/train_*.bin"')
    config.write_text(text_config.replace(f"seq_len: {T}", f"seq_len: {seq_len}"))
    run([*mpirun, "-np", str(RANKS), zerotrain, "train", "--config", config, "--set", "train.steps=40",
         "--set", "optimizer.lr=0.003"], work / "train.log")
    checkpoint = work / "run/checkpoints/step_00000040"
    out = work / "hf"
    run([zerotrain, "export", "--checkpoint", checkpoint, "--format", "hf", "--output", out, *tokenizer_files],
        work / "export.log")
    model = AutoModelForCausalLM.from_pretrained(out, attn_implementation="eager")
    model.eval()
    # The export's tokenizer reads text as the run's data was read, and generate() knows the run's
    # end-of-text token.
    tokenizer = AutoTokenizer.from_pretrained(out)
    end_of_text = 267 if bpe else 0
    generation = model.generation_config
    if (generation.bos_token_id, generation.eos_token_id, generation.pad_token_id) != (end_of_text,) * 3:
        fail(f"generation_config.json: bos/eos/pad {generation.bos_token_id}/{generation.eos_token_id}/"
             f"{generation.pad_token_id}, expected {end_of_text}")
    if tokenizer.model_max_length != seq_len or tokenizer.eos_token_id != end_of_text:
        fail(f"tokenizer: model_max_length {tokenizer.model_max_length} (trained on {seq_len}), eos "
             f"{tokenizer.eos_token_id} (expected {end_of_text})")
    shard_tokens = read_shard_tokens(sorted((work / "data").glob("train_*.bin"))[0])
    first_line = "line 0: the quick brown fox jumps over the lazy dog"  # one document
    encoded = tokenizer(first_line)["input_ids"]
    if list(shard_tokens[1:1 + len(encoded)]) != encoded:  # the shard starts with end-of-text
        fail(f"AutoTokenizer encodes {first_line!r} as {encoded}, the run's data as "
             f"{list(shard_tokens[1:1 + len(encoded)])}")

    # eval: the validation windows in file order, window k at token k*T, T+1 tokens each.
    log = run([zerotrain, "eval", "--checkpoint", checkpoint, "--batch-size", str(batch),
               "--data", f"{work}/data/val_*.bin"], work / "eval.log")
    fields = log.split()
    loss = float(fields[fields.index("loss") + 1])
    batches = int(fields[fields.index("batches,") - 1])
    windows = []
    for shard in sorted((work / "data").glob("val_*.bin")):
        tokens = read_shard_tokens(shard)
        windows += [tokens[k * seq_len:k * seq_len + seq_len + 1] for k in range((len(tokens) - 1) // seq_len)]
    rows = torch.from_numpy(np.stack(windows[:batches * batch]).astype(np.int64))
    with torch.no_grad():
        want = batch_loss(model, rows[:, :-1], rows[:, 1:]).item()
    check_close(f"eval loss over {batches} batches", want, loss, 2e-5)

    # sample: greedy continuations of prompts with the export's own tokenizer and generation
    # config. generate() stops at end-of-text; zerotrain prints it as <|endoftext|> and goes on,
    # so its text must start with transformers'.
    for prompt in ("line 7: the", "jumps over", "line 2"):
        result = subprocess.run([zerotrain, "sample", "--checkpoint", checkpoint, "--prompt", prompt,
                                 "--max-new-tokens", str(new_tokens), "--temperature", "0", *tokenizer_files],
                                stdout=subprocess.PIPE, text=True)
        if result.returncode != 0:
            fail(f"zerotrain sample exited {result.returncode}")
        inputs = tokenizer(prompt, return_tensors="pt")
        with torch.no_grad():
            ids = model.generate(**inputs, max_new_tokens=new_tokens, do_sample=False)[0].tolist()
        expected = tokenizer.decode(ids)
        print(f"sample: zerotrain {result.stdout!r}\n        transformers {expected!r}")
        if not result.stdout.startswith(expected) or len(expected) <= len(prompt):
            fail(f"zerotrain's greedy sample of {prompt!r} differs from transformers' generate()")


def case_init_from(zerotrain, mpirun, work):
    inputs, targets = make_batch(work)
    torch.manual_seed(11)
    hf_config = GPT2Config(vocab_size=VOCAB, n_positions=T, n_embd=N_EMBD, n_layer=N_LAYER, n_head=N_HEAD,
                           resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, activation_function="gelu_new")
    model = GPT2LMHeadModel(hf_config)
    # Non-trivial LayerNorm parameters and biases, so a mix-up of any tensor shows in the loss.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias") or ".ln_" in name:
                p.add_(0.05 * torch.randn_like(p))
    hf_dir = work / "hf_init"
    model.save_pretrained(hf_dir)

    config = work / "train.yaml"
    write_config(config, f"  init_from: \"{hf_dir}\"")  # no shape keys: they come from config.json
    log = run([*mpirun, "-np", str(RANKS), zerotrain, "train", "--config", config,
               "--set", "zero_optimization.stage=3"], work / "train.log")
    if "initialised" not in log:
        fail("the run did not say it initialised from the Hugging Face weights")
    zt = metrics(work / "run")
    if len(zt) != STEPS:
        fail(f"expected {STEPS} step records, found {len(zt)}")

    model = GPT2LMHeadModel.from_pretrained(hf_dir, attn_implementation="eager")
    model.train()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": WD}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=LR, betas=BETAS, eps=EPS)
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = batch_loss(model, inputs, targets)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP).item()
        optimizer.step()
        check_close(f"step {step + 1} loss", loss.item(), zt[step]["loss"], 3e-6)
        check_close(f"step {step + 1} grad norm", norm, zt[step]["grad_norm"], 1e-5 * max(1.0, norm))


def case_init_from_llama(zerotrain, mpirun, work):
    """A random transformers LlamaForCausalLM (GQA, untied head) starts a zerotrain run: the first
    step's loss (the loaded weights) and gradient norm equal PyTorch's. The config names only
    model.init_from: the type and every shape key come from the checkpoint's config.json."""
    from transformers import LlamaConfig, LlamaForCausalLM
    inputs, targets = make_batch(work)
    torch.manual_seed(13)
    hf_config = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=88, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=T,
                            rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False)
    model = LlamaForCausalLM(hf_config)
    with torch.no_grad():  # non-trivial norm gains, so a mix-up of any tensor shows in the loss
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.05 * torch.randn_like(p))
    hf_dir = work / "hf_init"
    model.save_pretrained(hf_dir)
    config = work / "train.yaml"
    write_config(config, f"  init_from: \"{hf_dir}\"")
    config.write_text(config.read_text().replace("  type: gpt2\n", ""))  # the type comes from config.json too
    log = run([*mpirun, "-np", str(RANKS), zerotrain, "train", "--config", config, "--set", "train.steps=1",
               "--set", "zero_optimization.stage=2"], work / "train.log")
    if "initialised" not in log:
        fail("the run did not say it initialised from the Hugging Face weights")
    zt = metrics(work / "run")
    model = LlamaForCausalLM.from_pretrained(hf_dir, attn_implementation="eager")
    model.train()
    loss = batch_loss(model, inputs, targets)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP).item()
    check_close("step 1 loss", loss.item(), zt[0]["loss"], 3e-6)
    check_close("step 1 grad norm", norm, zt[0]["grad_norm"], 1e-5 * max(1.0, norm))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    case, zerotrain, mpirun = sys.argv[1], sys.argv[2], sys.argv[3:]
    torch.set_num_threads(1)
    cases = {"export": case_export, "export_bf16": case_export_bf16, "export_llama": case_export_llama, "init_from": case_init_from,
             "init_from_llama": case_init_from_llama, "eval_sample": case_eval_sample,
             "eval_sample_llama": lambda *args: case_eval_sample(*args, family="llama"),
             "eval_sample_bpe": lambda *args: case_eval_sample(*args, bpe=True)}
    if case not in cases:
        sys.exit(f"unknown case {case!r} (known: {', '.join(cases)})")
    with tempfile.TemporaryDirectory() as work:
        cases[case](zerotrain, mpirun, Path(work))
    print(f"PASS: {case}")


if __name__ == "__main__":
    main()
