#!/usr/bin/env bash
# Stopping zerotrain under a real Slurm (tests/launch/slurm-cluster.sh: 2 nodes in namespaces)
# through launch/slurm.sbatch, one rank per node:
#   1. scancel --signal=TERM (to the ranks) while checkpoints are being written: the ranks stop
#      after one step with a final checkpoint, every checkpoint is whole, exit 143, no requeue;
#   2. scancel --batch --signal=TERM (to the batch script): it relays the stop as SIGUSR1, which
#      srun passes on: a final checkpoint, exit 143, no requeue;
#   3. a rank killed (SIGKILL): srun --kill-on-bad-exit sends the other SIGTERM; its stop cannot
#      finish without the dead rank, and it ends within seconds naming it, not after Slurm's
#      KillWait (30 s here).
# Exit 77 (CTest skip) without namespaces, root or Slurm/munge.
# usage: slurm_stop_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"

# submit NAME [zerotrain --set args...]: launch/slurm.sbatch on 2 nodes x 1 task, a long run of a
# model whose checkpoints take a while (about 40 MB); its log is $TMP/NAME.out, run dir $TMP/NAME.
# Sets id and JOBLOG.
submit() {
  local name=$1
  shift
  JOBLOG="$TMP/$name.out"
  id=$(cd "$TMP" && ZT_REPO="$REPO" ZT_BIN="$BIN" slurm sbatch --parsable --nodes=2 --ntasks-per-node=1 \
    --chdir="$TMP" --output="$JOBLOG" "$REPO/launch/slurm.sbatch" "${JOB[@]}" \
    --set model.n_layer=4 --set model.n_embd=256 --set model.n_head=4 --set train.steps=100000 \
    --set "logging.run_dir=$TMP/$name" --set "checkpoint.dir=$TMP/$name/checkpoints" "$@")
  [[ "$id" =~ ^[0-9]+$ ]] || fail "sbatch printed no job id: $id"
}
# wait_for_step RUN_DIR STEP: until metrics.jsonl has STEP (60 s at most).
wait_for_step() {
  local i
  for i in $(seq 1 600); do
    grep -qs "\"step\":$2[,}]" "$1/metrics.jsonl" && return 0
    sleep 0.1
  done
  fail "step $2 never appeared in $1/metrics.jsonl; job log:"$'\n'"$(cat "$JOBLOG")"
}
# assert_final_checkpoint RUN_DIR: the last step in metrics.jsonl has a complete checkpoint, and
# no checkpoint directory is incomplete. Sets last.
assert_final_checkpoint() {
  local dir
  last=$(steps "$1" | tail -1)
  dir=$(printf '%s/checkpoints/step_%08d' "$1" "$last")
  [[ -f "$dir/COMPLETE" ]] || fail "no complete final checkpoint $dir:"$'\n'"$(ls "$1/checkpoints")"$'\n'"$(cat "$JOBLOG")"
  for dir in "$1"/checkpoints/step_*; do
    [[ -f "$dir/COMPLETE" ]] || fail "$dir is incomplete"
  done
}

# 1. scancel --signal=TERM to the ranks while every step writes a checkpoint.
submit term --set checkpoint.interval=1
wait_for_step "$TMP/term" 3
slurm scancel --signal=TERM "$id"
state=$(wait_job_end "$id" 60)
log=$(cat "$JOBLOG")
assert_eq "$state" FAILED "state after scancel --signal=TERM"
assert_eq "$(job_field "$id" ExitCode)" "143:0" "exit code after scancel --signal=TERM"
assert_eq "$(job_field "$id" Restarts)" 0 "restarts after scancel --signal=TERM"
assert_final_checkpoint "$TMP/term"
grep -qE "SIGTERM received( by another rank)?: stopping after step $last; final checkpoint" <<<"$log" ||
  fail "no stop line after step $last:"$'\n'"$log"
pass "scancel --signal=TERM during checkpoints: stopped after step $last, its checkpoint and all others whole, exit 143"

# 2. scancel --batch --signal=TERM to the batch script, which relays it.
submit batch --set checkpoint.interval=1000
wait_for_step "$TMP/batch" 3
slurm scancel --batch --signal=TERM "$id"
state=$(wait_job_end "$id" 60)
log=$(cat "$JOBLOG")
assert_eq "$state" FAILED "state after scancel --batch --signal=TERM"
assert_eq "$(job_field "$id" ExitCode)" "143:0" "exit code after scancel --batch --signal=TERM"
assert_eq "$(job_field "$id" Restarts)" 0 "restarts after scancel --batch --signal=TERM"
assert_contains "$log" "slurm.sbatch: got SIGTERM: asking the ranks to stop"
assert_final_checkpoint "$TMP/batch"
grep -qE "SIGUSR1 received( by another rank)?: stopping after step $last; final checkpoint" <<<"$log" ||
  fail "no stop line after step $last:"$'\n'"$log"
pass "scancel --batch --signal=TERM: relayed, stopped after step $last with a final checkpoint, exit 143"

# 3. Rank 1 killed: the job ends within seconds, not after KillWait, naming the dead rank.
submit killed --set checkpoint.interval=1000
wait_for_step "$TMP/killed" 3
rank1=""
for p in $(ip netns pids "$h1"); do
  [[ "$(readlink "/proc/$p/exe" 2>/dev/null)" == "$BIN" ]] && rank1=$p
done
[[ -n "$rank1" ]] || fail "no zerotrain process in $h1"
killed_at=$(date +%s%N)
kill -KILL "$rank1"
state=$(wait_job_end "$id" 60)
ended_ms=$((($(date +%s%N) - killed_at) / 1000000))
log=$(cat "$JOBLOG")
assert_eq "$state" FAILED "state after rank 1 was killed"
assert_contains "$log" "comm: rank 1 is gone: its flight record"
assert_at_most "$ended_ms" 25000 "ms from rank 1's death to the end of the job (KillWait is 30 s)"
pass "rank 1 killed: the job ended after $ended_ms ms (KillWait 30 s), rank 0 naming rank 1"
