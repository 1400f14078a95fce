#!/usr/bin/env bash
# A run made to diverge for real (no injected NaN): weight decay 1e6 at lr 1 multiplies the decayed
# weights by about -1e6 every step, so activations overflow to inf within a few steps and the loss
# becomes inf/NaN. (1) train.on_nonfinite: stop ends the job at that step, exit 4, naming the step
# and the last good checkpoint, and saves no checkpoint of the broken state; (2) skip warns, goes
# on, and stops after train.max_consecutive_nonfinite steps in a row. fp32 only: bf16 needs a CUDA
# device (the guard reads the same all-reduced loss and overflow flag in every dtype).
# usage: nonfinite_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job
DIVERGE=(--set optimizer.lr=1 --set optimizer.weight_decay=1e6 --set scheduler.type=constant
         --set train.gradient_clipping=0 --set train.steps=40)

for dtype in fp32; do
  rm -rf run
  run_job 2 "$ZEROTRAIN" train --config config.yaml "${DIVERGE[@]}" --set precision.dtype=$dtype \
    --set checkpoint.interval=1 --set checkpoint.keep_last=0
  assert_eq "$rc" 4 "$dtype: exit status of a diverged run (train.on_nonfinite: stop)"
  line=$(grep -E "error\] step [0-9]+: the loss is" <<<"$out" | head -1) || fail "$dtype: no stop message; output:"$'\n'"$out"
  step=$(sed -E 's/.*error\] step ([0-9]+):.*/\1/' <<<"$line")
  assert_contains "$line" "stopping because train.on_nonfinite is stop"
  last_good=$(printf 'run/checkpoints/step_%08d' $((step - 1)))
  assert_contains "$line" "the last good checkpoint is $last_good" "$dtype: stop message"
  assert_contains "$line" "exit status 4"
  [[ -f $last_good/COMPLETE ]] || fail "$dtype: $last_good is not a complete checkpoint"
  [[ ! -e $(printf 'run/checkpoints/step_%08d' "$step") ]] || fail "$dtype: the non-finite step $step was saved"
  assert_at_most "$step" 20 "$dtype: step of the divergence"
  pass "$dtype diverges at step $step: exit 4, '$line'"
  echo "timing: nonfinite_stop_$dtype detected at step $step, job ${ms}ms"
done

rm -rf run
run_job 2 "$ZEROTRAIN" train --config config.yaml "${DIVERGE[@]}" --set train.on_nonfinite=skip \
  --set train.max_consecutive_nonfinite=3
assert_eq "$rc" 4 "exit status after 3 non-finite steps in a row (train.on_nonfinite: skip)"
warnings=$(grep -c "going on (train.on_nonfinite: skip" <<<"$out" || true)
assert_eq "$warnings" 2 "warnings before the third non-finite step in a row"
assert_contains "$out" "that is 3 non-finite steps in a row (train.max_consecutive_nonfinite = 3): the run does not recover, stopping"
assert_contains "$out" "no checkpoint was saved in run/checkpoints"
pass "skip: 2 warnings, then exit 4 at the third non-finite step in a row"
