#!/usr/bin/env bash
# `zerotrain eval` and `zerotrain sample` through the real binary, and train.sample_interval:
#   - eval scores the whole validation set by default, on 1 rank and on 2 ranks (the same global
#     batch split differently) with the same loss, perplexity = exp(loss), --batches limits it;
#   - sample continues the prompt, the same seed gives the same text, another seed other text,
#     temperature 0 ignores the seed;
#   - training with train.sample_interval prints samples; bad arguments get clear messages.
# Usage: eval_sample_test.sh ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
set -euo pipefail
zerotrain=$1
shift
mpirun=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
field() { sed -n "s/.*$1 \([0-9.e+-]*\).*/\1/p" "$2"; }  # field NAME FILE: the number after NAME

for i in $(seq 1 300); do printf "line %s: the quick brown fox jumps over the lazy dog\n\n" "$i"; done > "$work/text.txt"
"$zerotrain" prepare-data --input "$work/text.txt" --output "$work/data" --val-fraction 0.2 > /dev/null

cat > "$work/train.yaml" <<YAML
data:
  train_files: "$work/data/train_*.bin"
  val_files: "$work/data/val_*.bin"
  seq_len: 32
train:
  device: cpu
  steps: 20
  eval_interval: 0
  sample_interval: 10
checkpoint:
  interval: 20
logging:
  run_dir: "$work/run"
YAML
"$zerotrain" train --config "$work/train.yaml" > "$work/train.log" 2>&1 ||
  { cat "$work/train.log"; fail "training failed"; }
grep -q 'step 10 | sample: "' "$work/train.log" || { cat "$work/train.log"; fail "no sample at step 10"; }
grep -q 'step 20 | sample: "' "$work/train.log" || fail "no sample at step 20"
checkpoint="$work/run/checkpoints/step_00000020"

"$zerotrain" eval --checkpoint "$checkpoint" --batch-size 4 > "$work/eval1.log" || fail "eval on 1 rank failed"
"${mpirun[@]}" -np 2 "$zerotrain" eval --checkpoint "$checkpoint" --batch-size 2 > "$work/eval2.log" ||
  fail "eval on 2 ranks failed"
cat "$work/eval1.log" "$work/eval2.log"
loss1=$(field loss "$work/eval1.log") loss2=$(field loss "$work/eval2.log") ppl1=$(field perplexity "$work/eval1.log")
[ -n "$loss1" ] && [ -n "$loss2" ] || fail "eval printed no loss"
awk -v a="$loss1" -v b="$loss2" 'BEGIN { d = a - b; exit !(d < 1e-5 && d > -1e-5) }' ||
  fail "1 rank and 2 ranks disagree: $loss1 vs $loss2"
awk -v l="$loss1" -v p="$ppl1" 'BEGIN { d = exp(l) - p; exit !(d < 1e-3 && d > -1e-3) }' || fail "perplexity is not exp(loss)"
# The whole set: every window of the validation split that fills a batch of 4.
windows=$(sed -n 's/.* of \([0-9]*\) windows.*/\1/p' "$work/eval1.log")
batches=$(sed -n 's/.* \([0-9]*\) batches.*/\1/p' "$work/eval1.log")
[ "$batches" -eq $(( windows / 4 )) ] && [ "$batches" -gt 1 ] || fail "eval scored $batches batches of $windows windows"
out=$("$zerotrain" eval --checkpoint "$checkpoint" --batches 1)
grep -q " 1 batches, " <<<"$out" || fail "--batches 1 was not obeyed: $out"
out=$("$zerotrain" eval --checkpoint "$checkpoint" --data "$work/data/train_*.bin")
grep -q "on $work/data/train_" <<<"$out" || fail "--data was not used: $out"
if "$zerotrain" eval --checkpoint "$checkpoint" --data "$work/nothing_*.bin" > "$work/bad.log" 2>&1; then
  fail "eval of missing data succeeded"; fi
grep -q "nothing_\*.bin" "$work/bad.log" || { cat "$work/bad.log"; fail "the missing-data error does not name the glob"; }

sample() { "$zerotrain" sample --checkpoint "$checkpoint" --prompt "line 7: the" --max-new-tokens 24 "$@"; }
a=$(sample --seed 1) b=$(sample --seed 1) c=$(sample --seed 2)
[ "$a" = "$b" ] || fail "the same seed gave different text: '$a' vs '$b'"
[ "$a" != "$c" ] || fail "seeds 1 and 2 gave the same text: '$a'"
[[ "$a" == "line 7: the"* ]] || fail "the sample does not start with the prompt: '$a'"
g1=$(sample --temperature 0 --seed 1) g2=$(sample --temperature 0 --seed 2)
[ "$g1" = "$g2" ] || fail "temperature 0 depends on the seed"
k1=$(sample --top-k 1 --seed 5)
[ "$k1" = "$g1" ] || fail "top-k 1 is not the greedy choice: '$k1' vs '$g1'"
echo "sample: $a"
if sample --temperature -1 > "$work/bad.log" 2>&1; then fail "a negative temperature was accepted"; fi
grep -q -- "--temperature -1: expected a number in 0..1000000" "$work/bad.log" || fail "no message for a negative temperature"
echo PASS
