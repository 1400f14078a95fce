#!/usr/bin/env bash
# Token shards that change under a running job, or that are not files: (1) a shard truncated
# while the job trains ends it with one error naming the file and the byte offset (no SIGBUS);
# (2) a shard rewritten in place with tokens >= vocab_size ends it naming the file, the offset and
# the token (no training on garbage); (3) a FIFO matching the data glob is refused at start-up
# instead of blocking forever; (4) a SIGTERM during start-up ends the job promptly.
# usage: data_changes_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job
LONG=(--set train.steps=100000 --set checkpoint.interval=0)
shard=data/train_000000.bin

# change_during_training HOW: starts a long job, changes the shard once step 3 is done, waits.
change_during_training() {
  rm -rf run
  cp "$shard" shard.orig
  start_job 2 job.log "$ZEROTRAIN" train --config config.yaml "${LONG[@]}"
  wait_for_step run/metrics.jsonl 3
  local changed
  changed=$(now_ms)
  "$@"
  rc=0
  wait "$job_pid" || rc=$?
  ms=$(($(now_ms) - changed))
  out=$(cat job.log)
  cp shard.orig "$shard"
  [[ $rc != 124 ]] || fail "the job did not stop within 120 s after the shard changed; output:"$'\n'"$out"
}

# (1) Truncated to 100 tokens.
change_during_training truncate -s $((1024 + 200)) "$shard"
(( rc != 0 )) || fail "the job went on after its shard was truncated"
assert_contains "$out" "data/train_000000.bin: the file ends at byte"
assert_contains "$out" "was it truncated or rewritten during the run?"
assert_not_contains "$out" "Bus error"
assert_not_contains "$out" "signal 7"
assert_at_most "$ms" 20000 "ms from the truncation to the end of the job"
pass "shard truncated during training: exit $rc after $ms ms, file and offset named"

# (2) Rewritten in place (same size, same inode): every token becomes 0xffff.
overwrite_tokens() {
  local bytes=$(($(stat -c %s "$shard") - 1024))
  head -c "$bytes" /dev/zero | tr '\0' '\377' | dd of="$shard" bs=1024 seek=1 conv=notrunc status=none
}
change_during_training overwrite_tokens
(( rc != 0 )) || fail "the job went on training on tokens >= vocab_size"
assert_contains "$out" "data/train_000000.bin: token 65535 at index"
assert_contains "$out" "is not below the model's vocabulary size 256"
assert_at_most "$ms" 20000 "ms from the rewrite to the end of the job"
pass "shard rewritten with tokens >= vocab_size during training: exit $rc after $ms ms, file, offset and token named"

# (3) A FIFO matching the glob: refused at once (it used to block the start-up forever).
mkfifo data/train_000001.bin
start=$(now_ms)
rc=0
out=$(timeout -k 2 20 "$MPIEXEC" "${MPI_FLAGS[@]}" -np 2 "$ZEROTRAIN" train --config config.yaml 2>&1) || rc=$?
ms=$(($(now_ms) - start))
[[ $rc != 124 && $rc != 137 ]] || fail "a FIFO in the data glob blocked the start-up for 20 s"
assert_eq "$rc" 1 "exit status with a FIFO in the data glob"
assert_contains "$out" "data/train_000001.bin: not a regular file (a FIFO); token shards must be regular files"
rm data/train_000001.bin
pass "a FIFO matching the data glob: refused in $ms ms"

# (4) SIGTERM while the ranks start up (before step 1): the job ends promptly, not after 100000 steps.
rm -rf run
start_job 2 job.log "$ZEROTRAIN" train --config config.yaml "${LONG[@]}"
mpirun_pid=""
for i in $(seq 1 200); do
  mpirun_pid=$(pgrep -P "$job_pid" || true)
  [[ -n $mpirun_pid ]] && ranks=($(rank_pids "$mpirun_pid")) && ((${#ranks[@]} == 2)) && break
  sleep 0.02
done
((${#ranks[@]} == 2)) || fail "the ranks did not start"
sent=$(now_ms)
kill -TERM "${ranks[@]}"
rc=0
wait "$job_pid" || rc=$?
ms=$(($(now_ms) - sent))
out=$(cat job.log)
(( rc != 0 )) || fail "a job sent SIGTERM at start-up exited 0"
assert_at_most "$ms" 15000 "ms from a start-up SIGTERM to the end of the job"
assert_not_contains "$out" "step 10/" "output (the job must not train on)"
pass "SIGTERM during start-up: the job ended after $ms ms with exit $rc"
