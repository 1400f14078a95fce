#!/usr/bin/env bash
# A training job longer than its Slurm time limit continues by itself to the last step, under a
# real Slurm (tests/launch/slurm-cluster.sh: 2 nodes in namespaces), through launch/slurm.sbatch:
# Slurm's time-limit warning (--signal=B:USR1@80 on a 2-minute limit) reaches the batch script,
# the ranks write a final checkpoint, the script requeues the job, the next attempt resumes
# (--resume auto) in the same log (--open-mode=append), and the last step's loss equals that of
# the same run uninterrupted, bit for bit.
# slurmctld tests limits every 30 s: the warning goes out at the first test that finds at most
# 80 + 30 s left, 10-40 s after an attempt starts. The run is sized to about 75 s of steps at the
# pace measured here, so that the first attempt cannot finish even 1.8 times faster.
# Exit 77 (CTest skip) without namespaces, root or Slurm/munge.
# usage: slurm_time_limit_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
JOB+=(--set checkpoint.interval=100000)

# run_srun NAME STEPS: 2 nodes x 1 rank straight through srun, no time limit; sets ms.
run_srun() {
  local start rc=0 out
  start=$(date +%s%N)
  out=$(cd "$TMP" && slurm srun --mpi=pmix -N2 --ntasks-per-node=1 --kill-on-bad-exit=1 "$BIN" "${JOB[@]}" \
    --set "train.steps=$2" --set "logging.run_dir=$TMP/$1" --set "checkpoint.dir=$TMP/$1/checkpoints" 2>&1) || rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  [[ $rc -eq 0 ]] || fail "srun of $1 exited $rc:"$'\n'"$out"
}

# The pace of steps here (the mean step time of a short run, start-up left out), then the
# uninterrupted reference of about 75 s.
run_srun pace 1500
step_ms=$(python3 -c 'import json,sys
t=[json.loads(l)["step_ms"] for l in open(sys.argv[1]) if "step_ms" in l][1:]
print(sum(t)/len(t))' "$TMP/pace/metrics.jsonl")
steps_total=$(python3 -c "print(max(2000, int(75000 / $step_ms)))")
run_srun reference "$steps_total"
pass "reference: $steps_total steps uninterrupted in $ms ms"

JOBLOG="$TMP/limited.out"
id=$(cd "$TMP" && ZT_REPO="$REPO" ZT_BIN="$BIN" slurm sbatch --parsable --nodes=2 --ntasks-per-node=1 \
  --time=2 --signal=B:USR1@80 --chdir="$TMP" --output="$JOBLOG" "$REPO/launch/slurm.sbatch" "${JOB[@]}" \
  --set "train.steps=$steps_total" --set "logging.run_dir=$TMP/limited" --set "checkpoint.dir=$TMP/limited/checkpoints")
[[ "$id" =~ ^[0-9]+$ ]] || fail "sbatch printed no job id: $id"
start=$SECONDS
state=$(wait_job_end "$id" 300)
log=$(cat "$JOBLOG")
assert_eq "$state" COMPLETED "final state of the time-limited job"
assert_eq "$(job_field "$id" ExitCode)" "0:0" "exit code of its last attempt"
restarts=$(job_field "$id" Restarts)
((restarts >= 1)) || fail "the job finished without being requeued (a faster machine: size it up); log:"$'\n'"$log"
# Every attempt but the last stopped at a step with a final checkpoint and was requeued; every one
# but the first resumed from the previous one's final checkpoint. Rank 0 logs the stop; the signal
# may have reached it through another rank first ("received by another rank").
stops=($(sed -nE 's/.*SIGUSR1 received( by another rank)?: stopping after step ([0-9]+); final checkpoint .* written.*/\2/p' <<<"$log"))
resumes=($(sed -nE 's/.*resumed from .*step_([0-9]+) .*/\1/p' <<<"$log" | sed 's/^0*//'))
assert_eq "${#stops[@]}" "$restarts" "final checkpoints written (one per requeue)"
assert_eq "${stops[*]}" "${resumes[*]}" "steps resumed from (the previous attempts' final checkpoints)"
assert_eq "$(grep -c 'requeueing job' <<<"$log")" "$restarts" "requeues in the log"
for ((a = 1; a <= restarts + 1; a++)); do
  assert_contains "$log" "job $id (attempt $a)" "the one log of every attempt (--open-mode=append)"
done
assert_contains "$log" "step $steps_total/$steps_total"
assert_eq "$(last_loss "$TMP/limited")" "$(last_loss "$TMP/reference")" "last loss: time-limited run vs uninterrupted"
pass "time limit: $((restarts + 1)) attempts (stops after steps ${stops[*]}), COMPLETED in $((SECONDS - start)) s, last loss $(last_loss "$TMP/limited") = uninterrupted"
