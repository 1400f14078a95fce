#!/usr/bin/env bash
# Hugging Face weights through the real zerotrain binary, no Python needed:
#   - export --format hf, then model.init_from of it (ZeRO stage 3, 2 ranks, lr 0 so one step
#     changes nothing) and export again: model.safetensors is byte for byte the same, so names,
#     transposes and the vocabulary padding (1100 rows, padded to 1152 inside) round-trip;
#   - shape keys left out of the config come from the checkpoint's config.json;
#   - a config whose shapes differ is refused with one message naming every tensor and both shapes;
#   - --resume of a Hugging Face directory or a .safetensors file says it is not a zerotrain
#     checkpoint; init_from of a missing path or of a directory without weights says so.
# Usage: hf_errors_test.sh ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
set -euo pipefail
zerotrain=$1
shift
mpirun=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_error() {  # expect_error LOG TEXT...: the command failed and its output holds every TEXT
  local log=$1
  shift
  for text in "$@"; do grep -qF -- "$text" "$log" || { cat "$log"; fail "expected '$text' in $log"; }; done
}

for i in $(seq 1 200); do printf "line %s: the quick brown fox jumps over the lazy dog\n\n" "$i"; done > "$work/text.txt"
"$zerotrain" prepare-data --input "$work/text.txt" --output "$work/data" > /dev/null

cat > "$work/train.yaml" <<YAML
data:
  train_files: "$work/data/train_*.bin"
  val_files: ""
  seq_len: 16
train:
  device: cpu
  train_micro_batch_size_per_gpu: 2
  steps: 2
  eval_interval: 0
checkpoint:
  interval: 2
YAML
shape=(--set model.preset=none --set model.n_layer=2 --set model.n_head=4 --set model.n_embd=32
       --set model.vocab_size=1100 --set model.block_size=16)

"$zerotrain" train --config "$work/train.yaml" "${shape[@]}" --set logging.run_dir="$work/a" > "$work/a.log" 2>&1 ||
  { cat "$work/a.log"; fail "training run a failed"; }
"$zerotrain" export --checkpoint "$work/a/checkpoints/step_00000002" --format hf --output "$work/hf_a" > "$work/export_a.log" ||
  fail "export --format hf failed"
[ -f "$work/hf_a/config.json" ] && [ -f "$work/hf_a/model.safetensors" ] || fail "the export lacks config.json or model.safetensors"

# No shape keys: they come from hf_a/config.json. lr 0 leaves the weights as loaded.
"${mpirun[@]}" -np 2 "$zerotrain" train --config "$work/train.yaml" --set model.init_from="$work/hf_a" \
  --set optimizer.lr=0 --set scheduler.min_lr=0 --set train.steps=1 --set checkpoint.interval=1 --set zero_optimization.stage=3 \
  --set logging.run_dir="$work/b" > "$work/b.log" 2>&1 || { cat "$work/b.log"; fail "init_from run b failed"; }
grep -q "initialised .* tensors from" "$work/b.log" || fail "run b did not report loading the weights"
grep -q "n_embd: 32" "$work/b/config.yaml" || fail "model.n_embd was not taken from config.json"
grep -q "vocab_size: 1100" "$work/b/config.yaml" || fail "model.vocab_size was not taken from config.json"
"$zerotrain" export --checkpoint "$work/b/checkpoints/step_00000001" --format hf --output "$work/hf_b" > /dev/null
cmp "$work/hf_a/model.safetensors" "$work/hf_b/model.safetensors" || fail "the weights changed in the round trip"
cmp "$work/hf_a/config.json" "$work/hf_b/config.json" || fail "config.json changed in the round trip"

# Shapes that do not fit: every mismatching tensor is named with both shapes, in one run.
if "$zerotrain" train --config "$work/train.yaml" --set model.init_from="$work/hf_a" --set model.n_embd=64 \
  --set model.n_layer=3 --set logging.run_dir="$work/c" > "$work/c.log" 2>&1; then fail "a mismatching init_from ran"; fi
expect_error "$work/c.log" "does not fit this run's model" \
  "tensor 'transformer.wte.weight' has shape [1100, 32] in the checkpoint, the config needs [1100, 64]" \
  "tensor 'transformer.h.0.attn.c_attn.weight' has shape [32, 96] in the checkpoint, the config needs [64, 192]" \
  "tensor 'transformer.h.2.ln_1.weight' is missing"

# A bare .safetensors file works too; with no config.json beside it the config gives the shape.
mkdir "$work/bare" && cp "$work/hf_a/model.safetensors" "$work/bare/weights.safetensors"
"$zerotrain" train --config "$work/train.yaml" "${shape[@]}" --set model.init_from="$work/bare/weights.safetensors" \
  --set train.steps=1 --set checkpoint.interval=0 --set logging.run_dir="$work/d" > "$work/d.log" 2>&1 ||
  { cat "$work/d.log"; fail "init_from of a .safetensors file failed"; }

# --resume of things that are not zerotrain checkpoints.
if "$zerotrain" train --config "$work/train.yaml" "${shape[@]}" --resume "$work/hf_a" \
  --set logging.run_dir="$work/e" > "$work/e.log" 2>&1; then fail "--resume of a Hugging Face directory ran"; fi
expect_error "$work/e.log" "$work/hf_a is not a zerotrain checkpoint" "model.init_from: $work/hf_a"
if "$zerotrain" train --config "$work/train.yaml" "${shape[@]}" --resume "$work/hf_a/model.safetensors" \
  --set logging.run_dir="$work/f" > "$work/f.log" 2>&1; then fail "--resume of a .safetensors file ran"; fi
expect_error "$work/f.log" "model.safetensors is a file, not a zerotrain checkpoint"

# init_from of a missing path, and of a directory without weights.
if "$zerotrain" train --config "$work/train.yaml" "${shape[@]}" --set model.init_from="$work/nowhere" \
  --set logging.run_dir="$work/g" > "$work/g.log" 2>&1; then fail "init_from of a missing path ran"; fi
expect_error "$work/g.log" "model.init_from: $work/nowhere does not exist"
if "$zerotrain" train --config "$work/train.yaml" "${shape[@]}" --set model.init_from="$work/data" \
  --set logging.run_dir="$work/h" > "$work/h.log" 2>&1; then fail "init_from of a directory without weights ran"; fi
expect_error "$work/h.log" "has no model.safetensors"
echo "PASS"
