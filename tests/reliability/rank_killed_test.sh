#!/usr/bin/env bash
# A rank killed with SIGKILL mid-run (OOM killer, a node lost): nobody hangs.
# (1) Plain mpirun: it sees the death and ends the job at once, naming the rank and the signal.
# (2) Rank 1 frozen (SIGSTOP: a rank stuck in the kernel or a deadlock, alive to the launcher): the
#     survivor's comm watchdog ends it after comm.timeout_s, naming the collective that timed out
#     and, from the flight records, rank 1 and what it did last; mpirun then takes the job down. (A SIGKILLed rank under `--mca orte_abort_on_non_zero_status
#     0` is not tested: OpenMPI 4.1's mpirun then never exits, even after the survivors did.)
# (3) Under launch/auto-resume.sh with checkpoints: the newest complete checkpoint is intact, the
#     restart with --resume auto finishes the job, and its final loss equals an uninterrupted run's.
# usage: rank_killed_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job

# kill_rank_after STEP PID [SIGNAL]: SIGNAL (KILL) to rank 1 (a zerotrain process under PID) once
# STEP is in run/metrics.jsonl; sets killed_at.
kill_rank_after() {
  local step=$1 parent=$2 signal=${3:-KILL} pid
  wait_for_step run/metrics.jsonl "$step"
  for pid in $(rank_pids "$parent"); do
    if grep -qxz OMPI_COMM_WORLD_RANK=1 "/proc/$pid/environ"; then
      killed_at=$(now_ms)
      kill -s "$signal" "$pid"
      return 0
    fi
  done
  fail "rank 1 not found under process $parent"
}

# (1) and (2)
for mode in killed frozen; do
  rm -rf run
  timeout -k 5 120 "$MPIEXEC" "${MPI_FLAGS[@]}" -np 2 "$ZEROTRAIN" train --config config.yaml \
    --set train.steps=100000 --set comm.timeout_s=5 >job.log 2>&1 &
  job_pid=$!
  BACKGROUND_PIDS+=("$job_pid")
  if [[ $mode == killed ]]; then kill_rank_after 3 "$job_pid" KILL; else kill_rank_after 3 "$job_pid" STOP; fi
  rc=0
  wait "$job_pid" || rc=$?
  ms=$(($(now_ms) - killed_at))
  out=$(cat job.log)
  [[ $rc != 124 ]] || fail "$mode: the job hung after rank 1 was $mode; output:"$'\n'"$out"
  (( rc != 0 )) || fail "$mode: mpirun exited 0"
  if [[ $mode == killed ]]; then
    assert_contains "$out" "noticed that process rank 1 with PID"  # mpirun or mpiexec
    assert_contains "$out" "exited on signal 9 (Killed)"
    assert_at_most "$ms" 10000 "killed: ms from the kill to the end of the job"
  else
    assert_contains "$out" "[zt rank 0 error] comm timeout:"
    assert_contains "$out" "has not completed after 5."
    assert_contains "$out" "a peer rank may have died"
    # The flight records: rank 0 lists its own last collectives and names rank 1, whose record
    # stopped being rewritten when it was frozen (whether it froze before or inside the collective).
    assert_contains "$out" "this rank's last collectives on 'world': "
    assert_contains "$out" "rank 1 "
    assert_contains "$out" "its record was last written "
    assert_contains "$out" "ago: the process stopped running then"
    assert_contains "$out" "(flight records in run/flight_record)"
    assert_at_most "$ms" 30000 "frozen: ms from the SIGSTOP to the end of the job"
    # The first verdict stands: one verdict, kept beside the records, and rank 1 (resumed by the
    # launcher as it tears the job down) neither gives another nor rewrites its record after it.
    assert_eq "$(grep -c "comm timeout:" <<<"$out")" 1 "verdicts in the log"
    assert_contains "$(cat run/flight_record/verdict.txt)" "rank 0: comm timeout:"
    [[ ! run/flight_record/world.rank00001.txt -nt run/flight_record/verdict.txt ]] ||
      fail "rank 1 rewrote its flight record after the verdict"
  fi
  pass "rank 1 $mode: the job ended after $ms ms with exit $rc"
  echo "timing: rank_$mode ${ms}ms (exit $rc)"
  if [[ $mode == frozen ]]; then grep -m1 "comm timeout" <<<"$out"; fi
done

# (3) The reference: the same job, uninterrupted.
JOB=(--set train.steps=40 --set checkpoint.interval=4 --set checkpoint.keep_last=2)
rm -rf run
run_job 2 "$ZEROTRAIN" train --config config.yaml "${JOB[@]}"
assert_eq "$rc" 0 "exit status of the uninterrupted run"
reference_loss=$(last_loss run/metrics.jsonl)
mv run reference_run

"$REPO/launch/auto-resume.sh" --backoff 0 --max-restarts 2 -- \
  timeout -k 5 120 "$MPIEXEC" "${MPI_FLAGS[@]}" -np 2 "$ZEROTRAIN" train --config config.yaml "${JOB[@]}" \
  >job.log 2>&1 &
job_pid=$!
BACKGROUND_PIDS+=("$job_pid")
kill_rank_after 10 "$job_pid"
rc=0
wait "$job_pid" || rc=$?
out=$(cat job.log)
assert_eq "$rc" 0 "exit status of auto-resume after a rank was killed"
assert_contains "$out" "restart 1/2 with --resume auto"
resumed=$(grep -o "resumed from run/checkpoints/step_[0-9]*" <<<"$out") || fail "no resume line; output:"$'\n'"$out"
assert_contains "$out" "step 40/40"
final_loss=$(last_loss run/metrics.jsonl)
assert_eq "$final_loss" "$reference_loss" "final loss after kill + auto-resume vs uninterrupted"
pass "kill -9 of rank 1 after step 10, auto-resume ($resumed) finished with the uninterrupted run's final loss $final_loss"

# (4) Rank 1 dies while the checkpoint of step 8 is being written (tests/support/crash_on_open.c
# makes it _exit as it opens its list of shard files; preloaded for rank 1 only): the job ends,
# step 4 stays the newest complete checkpoint, and auto-resume finishes with the reference loss.
rm -rf run
crash_rank1_once crash_rank1_in_save.sh step_00000008.tmp/rank_00001.files.json
rc=0
"$REPO/launch/auto-resume.sh" --backoff 0 --max-restarts 2 -- \
  timeout -k 5 120 "$MPIEXEC" "${MPI_FLAGS[@]}" -np 2 ./crash_rank1_in_save.sh train --config config.yaml "${JOB[@]}" \
  >job.log 2>&1 || rc=$?
out=$(cat job.log)
assert_eq "$rc" 0 "exit status of auto-resume after rank 1 died mid-checkpoint"
assert_contains "$out" "resumed from run/checkpoints/step_00000004 (step 4"
assert_eq "$(last_loss run/metrics.jsonl)" "$reference_loss" "final loss after a crash mid-checkpoint + auto-resume"
pass "rank 1 died writing step 8: resumed from step 4, same final loss"
