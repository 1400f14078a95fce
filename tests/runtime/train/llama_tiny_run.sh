#!/usr/bin/env bash
# configs/llama-tiny.yaml end to end through the real binary: the default dataset, 2 ranks under
# mpirun at ZeRO stage 3 with gradient accumulation, 30 steps of 64 tokens; the loss must fall, and the
# checkpoint must export with transformers' tensor names under zerotrain's block names.
#
# Usage: llama_tiny_run.sh OUT ZEROTRAIN MPIEXEC [MPIEXEC_FLAGS...]
# Exit status 77 (CTest: skipped) when the fortunes-min texts are not installed.
set -euo pipefail
out=$1
zerotrain=$2
mpiexec=$3
shift 3
source_dir=$(cd "$(dirname "$0")/../../.." && pwd)

fortunes_dir=${ZT_FORTUNES_DIR:-/usr/share/games/fortunes}
if [ ! -f "$fortunes_dir/fortunes" ]; then
  echo "skipped: $fortunes_dir/fortunes is missing (install fortunes-min: scripts/setup.sh)"
  exit 77
fi
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"
ZEROTRAIN=$zerotrain ZT_DATA_DIR=$out/data bash "$source_dir/scripts/prepare-default-data.sh"

export OMPI_MCA_btl_vader_single_copy_mechanism=none
"$mpiexec" "$@" -np 2 "$zerotrain" train --config "$source_dir/configs/llama-tiny.yaml" \
  --set train.steps=30 --set data.seq_len=64 --set train.eval_interval=0 --set train.gradient_accumulation_steps=2 \
  --set zero_optimization.stage=3 --set scheduler.warmup_steps=5 \
  --set "data.train_files=$out/data/train_*.bin" --set "data.val_files=$out/data/val_*.bin" \
  --set "logging.run_dir=$out/run" --set checkpoint.interval=30 > "$out/train.log" 2>&1 ||
  { cat "$out/train.log"; fail "training failed"; }

# Mean loss of the first and the last 10 steps (about 4.5 and 3.2).
read -r first last < <(sed -n 's/.*"loss":\([^,}]*\).*"step":\([0-9]*\).*/\2 \1/p' "$out/run/metrics.jsonl" |
  awk '$1 <= 10 { a += $2 } $1 > 20 { b += $2 } END { printf "%f %f\n", a / 10, b / 10 }')
echo "llama-tiny: mean loss of steps 1-10 $first, of steps 21-30 $last"
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 1.0) }' || fail "the loss did not fall ($first -> $last)"

"$zerotrain" export --checkpoint "$out/run/checkpoints/step_00000030" --output "$out/model.safetensors" ||
  fail "export failed"
grep -a -q '"layers.3.self_attn.q_proj.weight"' "$out/model.safetensors" || fail "the export lacks layers.3's q_proj"
echo "PASS: llama-tiny trained on 2 ranks (ZeRO-3, accumulation 2) and exported"
