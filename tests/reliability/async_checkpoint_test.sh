#!/usr/bin/env bash
# checkpoint.async_save: the files are written in the background, with the same protocol and the
# same bytes as a synchronous save. (1) Every shard file of an asynchronous save equals the
# synchronous save's of the same run, and a run resumed from one ends with the uninterrupted run's
# loss; (2) SIGTERM while saves go on in the background: the final checkpoint is complete before
# the exit (143); (3) rank 1 dies while its background writer writes step 8: step 4 stays the
# newest complete checkpoint and auto-resume ends with the reference loss; (4) rank 1's background
# writes fail (a file size limit): the job ends with one error naming the cause, no hang.
# usage: async_checkpoint_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job
ASYNC=(--set checkpoint.async_save=true)
train() { run_job 2 "$ZEROTRAIN" train --config config.yaml "$@"; }

# (1) The same 12 steps saved both ways; the shard files must be identical byte for byte.
train --set train.steps=12 --set checkpoint.interval=4 --set checkpoint.keep_last=0 --set logging.run_dir=sync
assert_eq "$rc" 0 "exit status of the synchronous run; output: $out"
reference_loss=$(last_loss sync/metrics.jsonl)
train --set train.steps=12 --set checkpoint.interval=4 --set checkpoint.keep_last=0 --set logging.run_dir=async \
  "${ASYNC[@]}"
assert_eq "$rc" 0 "exit status of the asynchronous run; output: $out"
assert_contains "$out" "step 4 | checkpoint async/checkpoints/step_00000004: the state copied in"
assert_contains "$out" "checkpoint async/checkpoints/step_00000012"
assert_contains "$out" "complete, written in the background"
for step in 4 8 12; do
  dir=$(printf 'step_%08d' "$step")
  [[ -f async/checkpoints/$dir/COMPLETE ]] || fail "async/checkpoints/$dir is not complete: $(ls async/checkpoints)"
  for file in sync/checkpoints/"$dir"/*.f32; do
    cmp -s "$file" "async/checkpoints/$dir/$(basename "$file")" || fail "$(basename "$file") of $dir differs"
  done
done
assert_eq "$(last_loss async/metrics.jsonl)" "$reference_loss" "final loss of the asynchronous run"
rm -rf async/checkpoints/step_00000012
train --set train.steps=12 --set checkpoint.interval=4 --set logging.run_dir=async --resume auto "${ASYNC[@]}"
assert_eq "$rc" 0 "exit status of the run resumed from an asynchronous save; output: $out"
assert_contains "$out" "resumed from async/checkpoints/step_00000008"
assert_eq "$(last_loss async/metrics.jsonl)" "$reference_loss" "final loss after resuming an asynchronous save"
pass "asynchronous saves: the synchronous save's bytes; resumed, the same final loss"

# (2) SIGTERM to every rank of a long run saving every step in the background.
start_job 2 job.log "$ZEROTRAIN" train --config config.yaml --set train.steps=100000 --set checkpoint.interval=1 \
  --set checkpoint.keep_last=2 --set logging.run_dir=signalled "${ASYNC[@]}"
wait_for_step signalled/metrics.jsonl 5
kill -TERM $(rank_pids "$(pgrep -P "$job_pid")")
rc=0
wait "$job_pid" || rc=$?
out=$(cat job.log)
assert_eq "$rc" 143 "exit status after SIGTERM with saves in the background"
line=$(grep -E "SIGTERM received( by another rank)?: stopping after step" <<<"$out") || fail "no stop line; output:"$'\n'"$out"
step=$(sed -E 's/.*stopping after step ([0-9]+);.*/\1/' <<<"$line")
ckpt=$(printf 'signalled/checkpoints/step_%08d' "$step")
[[ -f $ckpt/COMPLETE ]] || fail "the final checkpoint $ckpt is not complete: $(ls signalled/checkpoints)"
[[ -z $(find signalled/checkpoints -maxdepth 1 -name '*.tmp') ]] || fail "a save was left half written: $(ls signalled/checkpoints)"
pass "SIGTERM: the final checkpoint (step $step) complete before exit 143"

# (3) Rank 1 dies (tests/support/crash_on_open.c) as its background writer opens its list of the
# shard files of step 8.
JOB=(--set train.steps=16 --set checkpoint.interval=4 --set checkpoint.keep_last=2 --set logging.run_dir=crash)
train "${JOB[@]}" --set logging.run_dir=crash_reference
assert_eq "$rc" 0 "exit status of the reference run; output: $out"
crash_reference_loss=$(last_loss crash_reference/metrics.jsonl)
crash_rank1_once crash_rank1_in_save.sh step_00000008.tmp/rank_00001.files.json
rc=0
"$REPO/launch/auto-resume.sh" --backoff 0 --max-restarts 2 -- \
  timeout -k 5 120 "$MPIEXEC" "${MPI_FLAGS[@]}" -np 2 ./crash_rank1_in_save.sh train --config config.yaml "${JOB[@]}" \
  "${ASYNC[@]}" >job.log 2>&1 || rc=$?
out=$(cat job.log)
assert_eq "$rc" 0 "exit status of auto-resume after rank 1 died in a background save"
[[ -e $TMP/crashed_once ]] || fail "rank 1 was never crashed"
assert_contains "$out" "resumed from crash/checkpoints/step_00000004 (step 4"
assert_eq "$(last_loss crash/metrics.jsonl)" "$crash_reference_loss" "final loss after a crash in a background save"
pass "rank 1 died writing step 8 in the background: resumed from step 4, same final loss"

# (4) Rank 1 cannot write its shard files (a 64 KiB file size limit: EFBIG).
cat >small_files_rank1.sh <<SH
#!/usr/bin/env bash
# Open MPI's shared-memory transport backs its segment with a file, which the limit would refuse
# at MPI_Init: these two ranks talk over TCP (loopback).
export OMPI_MCA_btl=self,tcp
if [[ \$OMPI_COMM_WORLD_RANK == 1 ]]; then ulimit -f 64; trap '' XFSZ; fi
exec "$ZEROTRAIN" "\$@"
SH
chmod +x small_files_rank1.sh
run_job 2 ./small_files_rank1.sh train --config config.yaml --set train.steps=20 --set checkpoint.interval=4 \
  --set logging.run_dir=full "${ASYNC[@]}"
assert_eq "$rc" 1 "exit status when rank 1's background writes fail"
assert_contains "$out" "File too large"
assert_not_contains "$out" "step 20/20" "output (the job must end at the failed save)"
assert_at_most "$ms" 60000 "ms until the job ended"
pass "rank 1's background writes failed: exit 1 in $ms ms naming the cause"
