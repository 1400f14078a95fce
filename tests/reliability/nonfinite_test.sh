#!/usr/bin/env bash
# Non-finite steps at a known step on any CPU: the test hook ZT_TEST_NAN_LR_AT_STEP=5 gives step 5's
# update a NaN learning rate, so every parameter is NaN afterwards and every step from 6 on has a
# NaN loss and NaN gradients. (A real divergence, e.g. weight decay 1e6 at lr 1, reaches inf at a
# step that depends on the CPU's BLAS kernels.) (1) train.on_nonfinite: stop ends the job at step 6,
# exit 4, naming the step and the last checkpoint, and saves no checkpoint of the non-finite step;
# (2) skip warns, goes on, and stops after train.max_consecutive_nonfinite steps in a row; (3) an
# invalid hook value is refused. (1) in fp32, bf16 and fp16: under fp16 loss scaling a skipped
# step is the scaler's business, but a NaN loss is not an overflow, and stops the job all the same.
# usage: nonfinite_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job
export ZT_TEST_NAN_LR_AT_STEP=5

for dtype in fp32 bf16 fp16; do
  rm -rf run
  run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=40 --set precision.dtype=$dtype \
    --set checkpoint.interval=1 --set checkpoint.keep_last=0
  assert_eq "$rc" 4 "$dtype: exit status of a non-finite run (train.on_nonfinite: stop)"
  assert_contains "$out" "test hook ZT_TEST_NAN_LR_AT_STEP=5: the update of step 5 uses a NaN learning rate"
  line=$(grep -m1 -E "error\] step [0-9]+: the loss is" <<<"$out") || fail "$dtype: no stop message; output:"$'\n'"$out"
  assert_contains "$line" "step 6: the loss is nan"
  assert_contains "$line" "(the update was skipped)"
  assert_contains "$line" "stopping because train.on_nonfinite is stop"
  assert_contains "$line" "the last good checkpoint is run/checkpoints/step_00000005" "$dtype: stop message"
  assert_contains "$line" "exit status 4"
  [[ -f run/checkpoints/step_00000005/COMPLETE ]] || fail "$dtype: step_00000005 is not a complete checkpoint"
  [[ ! -e run/checkpoints/step_00000006 ]] || fail "$dtype: the non-finite step 6 was saved"
  pass "$dtype: non-finite at step 6: exit 4, '$line'"
done

rm -rf run
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=40 --set train.on_nonfinite=skip \
  --set train.max_consecutive_nonfinite=3
assert_eq "$rc" 4 "exit status after 3 non-finite steps in a row (train.on_nonfinite: skip)"
warnings=$(grep -c "going on (train.on_nonfinite: skip" <<<"$out" || true)
assert_eq "$warnings" 2 "warnings before the third non-finite step in a row"
assert_contains "$out" "step 6: the loss is nan"
assert_contains "$out" "step 8: the loss is nan and the gradients are not finite (grad norm nan); that is 3 non-finite steps in a row (train.max_consecutive_nonfinite = 3): the run does not recover, stopping"
assert_contains "$out" "no checkpoint was saved in run/checkpoints"
pass "skip: 2 warnings (steps 6, 7), then exit 4 at step 8, the third non-finite step in a row"

for bad in 0 five -3; do
  rm -rf run
  ZT_TEST_NAN_LR_AT_STEP=$bad run_job 1 "$ZEROTRAIN" train --config config.yaml --set train.steps=2
  assert_eq "$rc" 1 "exit status with ZT_TEST_NAN_LR_AT_STEP=$bad"
  assert_contains "$out" "ZT_TEST_NAN_LR_AT_STEP='$bad': expected a step number >= 1"
done
pass "invalid hook values are refused"
