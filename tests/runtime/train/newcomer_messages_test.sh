#!/usr/bin/env bash
# What a newcomer meets first, through the real binary on 2 ranks under mpirun:
#   - training before the data is prepared: one error, printed once, pointing at prepare-data and
#     the default data script, and the job ends without tearing itself down (no MPI_ABORT);
#   - a config mistake: printed once, not once per rank;
#   - the training log's val loss says over how many batches (and of what) it was taken.
# Usage: newcomer_messages_test.sh ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
set -euo pipefail
zerotrain=$1
shift
mpirun=("$@")
source_dir=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export OMPI_MCA_btl_vader_single_copy_mechanism=none

fail() { echo "FAIL: $*" >&2; exit 1; }
count() { grep -cF -- "$2" "$1" || true; }

# No data yet (configs/default.yaml reads data/fortunes/ relative to the working directory).
status=0
"${mpirun[@]}" -np 2 "$zerotrain" train --config "$source_dir/configs/default.yaml" > no_data.log 2>&1 || status=$?
[ "$status" != 0 ] || { cat no_data.log; fail "training without data succeeded"; }
[ "$(count no_data.log "no token shard files match this pattern")" = 1 ] ||
  { cat no_data.log; fail "the missing data was not reported exactly once"; }
grep -qF 'zerotrain prepare-data' no_data.log && grep -qF 'bash scripts/prepare-default-data.sh' no_data.log ||
  { cat no_data.log; fail "the message does not say how to make the data"; }
grep -q "MPI_ABORT" no_data.log && { cat no_data.log; fail "the job was torn down with MPI_Abort"; }

# A config mistake every rank makes: once.
status=0
"${mpirun[@]}" -np 2 "$zerotrain" train --config "$source_dir/configs/default.yaml" --set train.stpes=3 \
  > typo.log 2>&1 || status=$?
[ "$status" != 0 ] || fail "a misspelt key was accepted"
[ "$(count typo.log "unknown key 'train.stpes'; did you mean 'train.steps'?")" = 1 ] ||
  { cat typo.log; fail "the config mistake was not reported exactly once"; }

# The val loss line: 3 batches per rank x 2 ranks of 2 sequences of 32 tokens.
for i in $(seq 200); do printf 'line %d: the quick brown fox jumps over the lazy dog\n\n' "$i"; done > text.txt
"$zerotrain" prepare-data --input text.txt --output data --val-fraction 0.2 > prepare.log 2>&1 ||
  { cat prepare.log; fail "prepare-data"; }
"${mpirun[@]}" -np 2 "$zerotrain" train --config "$source_dir/configs/default.yaml" --set train.steps=4 \
  --set train.eval_interval=2 --set train.eval_steps=3 --set train.train_micro_batch_size_per_gpu=2 \
  --set data.seq_len=32 --set "data.train_files=data/train_*.bin" --set "data.val_files=data/val_*.bin" \
  --set train.sample_interval=0 --set checkpoint.interval=0 --set logging.run_dir=run > val.log 2>&1 ||
  { cat val.log; fail "the training run failed"; }
grep -qE "step 2 \| val loss [0-9.]+ \(mean of 6 batches of 2 x 32 tokens: 3 per rank\)" val.log ||
  { cat val.log; fail "the val loss line does not say what it is a mean of"; }
echo PASS
