#!/usr/bin/env bash
# `zerotrain train` killed in the middle of writing a checkpoint, then `--resume auto`: the resumed
# run's losses equal an uninterrupted run's bit for bit, the partial checkpoint is cleaned up,
# the result exports, and a resume with another model is refused with a message naming the key.
# The crash comes from tests/support/crash_on_open.c (LD_PRELOAD, its path in $ZT_CRASH_ON_OPEN_LIB):
# each rank _exits as it opens its list of shard files for step 10, after writing the shard files.
#
# Usage: train_resume_test.sh ZEROTRAIN CONFIG MPIEXEC [MPIEXEC FLAGS...]
set -euo pipefail
zerotrain=$1 config=$2
shift 2
mpirun=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none

fail() { echo "FAIL: $*" >&2; exit 1; }
train() {  # train RUN_DIR [more args]
  local run_dir=$1
  shift
  "${mpirun[@]}" -np 2 "$zerotrain" train --config "$config" --set model.type=mlp --set train.steps=10 \
    --set train.eval_interval=0 --set checkpoint.interval=5 --set checkpoint.keep_last=3 \
    --set logging.run_dir="$run_dir" "$@"
}
# "step loss" of every step record, in file order.
losses() { sed -n 's/.*"loss":\([^,}]*\).*"step":\([0-9]*\).*/\2 \1/p' "$1"; }

train "$work/a" > "$work/a.log" 2>&1 || { cat "$work/a.log"; fail "the uninterrupted run failed"; }

if LD_PRELOAD="$ZT_CRASH_ON_OPEN_LIB" ZT_CRASH_ON_OPEN=step_00000010.tmp/rank_00000.files.json \
  train "$work/b" > "$work/b1.log" 2>&1; then fail "the crashing run exited 0"; fi
[ -f "$work/b/checkpoints/step_00000005/COMPLETE" ] || fail "the checkpoint of step 5 is not complete"
[ -d "$work/b/checkpoints/step_00000010.tmp" ] || fail "no partial checkpoint of step 10 was left"
[ ! -e "$work/b/checkpoints/step_00000010" ] || fail "a partial checkpoint took the final name"

train "$work/b" --resume auto > "$work/b2.log" 2>&1 || { cat "$work/b2.log"; fail "the resumed run failed"; }
grep -q "resumed from .*step_00000005" "$work/b2.log" || fail "the run did not resume from step 5"
[ ! -e "$work/b/checkpoints/step_00000010.tmp" ] || fail "the partial checkpoint was not cleaned up"
[ -f "$work/b/checkpoints/step_00000010/COMPLETE" ] || fail "the resumed run wrote no final checkpoint"

# metrics.jsonl of b holds steps 1..10 of the crashed run, then 6..10 of the resumed one.
want=$(losses "$work/a/metrics.jsonl" | awk '$1 >= 6')
got=$(losses "$work/b/metrics.jsonl" | tail -n 5)
[ "$want" = "$got" ] || fail "losses after resuming differ:"$'\n'"uninterrupted: $want"$'\n'"resumed: $got"

out=$("$zerotrain" export --checkpoint "$work/b/checkpoints/step_00000010" --output "$work/model.safetensors")
grep -q "tensors" <<<"$out" || fail "export said: $out"
[ -s "$work/model.safetensors" ] || fail "export wrote nothing"

set +e
msg=$("$zerotrain" train --config "$config" --set model.type=mlp --set model.mlp_layers=3 \
  --set logging.run_dir="$work/b" --resume "$work/b/checkpoints/step_00000010" 2>&1)
status=$?
set -e
[ $status -eq 1 ] || fail "a mismatched resume exited with $status, expected 1: $msg"
grep -q "model.mlp_layers is 2 in the checkpoint, 3 in the config" <<<"$msg" || fail "mismatch message: $msg"
echo "PASS: bitwise resume after a crash mid-checkpoint; export; mismatched model refused"
