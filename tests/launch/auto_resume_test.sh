#!/usr/bin/env bash
# auto-resume.sh: restarts with '--resume auto' until success, bounded, and stops on 1/2/4/130/138/143 and
# on INT. The job is a small script that logs its arguments and fails a set number of times.
# usage: auto_resume_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
REPO=$2
AR="$REPO/launch/auto-resume.sh"
unset ZT_RESUME_MAX_RESTARTS ZT_RESUME_BACKOFF 2>/dev/null || true

# fake job: appends "$*" to $TMP/log; exits $FAIL_STATUS while fewer than $SUCCEED_AT attempts ran.
cat >"$TMP/job.sh" <<'JOB'
#!/usr/bin/env bash
echo "$*" >>"$LOG"
n=$(wc -l <"$LOG")
[[ $n -ge $SUCCEED_AT ]] && exit 0
exit "$FAIL_STATUS"
JOB
chmod +x "$TMP/job.sh"
run_job() {  # run_job SUCCEED_AT FAIL_STATUS [auto-resume options] -- job args
  local succeed=$1 status=$2; shift 2
  : >"$TMP/log"
  rc=0
  LOG="$TMP/log" SUCCEED_AT=$succeed FAIL_STATUS=$status "$AR" "$@" 2>"$TMP/err" || rc=$?
  attempts=$(wc -l <"$TMP/log")
}

# fails twice, succeeds on the third attempt: two restarts, each with '--resume auto' appended once.
run_job 3 3 --backoff 0 -- "$TMP/job.sh" train --config c.yaml
assert_eq "$rc" 0 "exit status"
assert_eq "$attempts" 3 "attempts"
assert_eq "$(sed -n 1p "$TMP/log")" "train --config c.yaml" "first attempt's arguments"
assert_eq "$(sed -n 2p "$TMP/log")" "train --config c.yaml --resume auto" "second attempt's arguments"
assert_eq "$(sed -n 3p "$TMP/log")" "train --config c.yaml --resume auto" "third attempt's arguments"
pass "fail, fail, succeed -> 3 attempts, --resume auto on restarts"

# an explicit '--resume PATH' is replaced by '--resume auto' on restarts (the newest checkpoint wins).
run_job 2 3 --backoff 0 -- "$TMP/job.sh" train --resume ckpt/step100 --config c.yaml
assert_eq "$(sed -n 2p "$TMP/log")" "train --config c.yaml --resume auto" "restart after --resume PATH"
pass "--resume PATH replaced"

# bounded: always failing with 3 (a hang the watchdog ended), --max-restarts 2 -> 3 attempts, the
# job's status.
run_job 99 3 --backoff 0 --max-restarts 2 -- "$TMP/job.sh" train
assert_eq "$rc" 3 "exit status after giving up"
assert_eq "$attempts" 3 "attempts with --max-restarts 2"
assert_contains "$(cat "$TMP/err")" "giving up after 2 restart(s)"
pass "max restarts"

# no restart on a bad config or data (1), a usage error (2), a non-finite loss (4), nor on
# 130/143 (interrupted/terminated): the same command would fail the same way, or was stopped.
for status in 1 2 4 130 138 143; do
  run_job 99 "$status" --backoff 0 -- "$TMP/job.sh" train
  assert_eq "$rc" "$status" "exit status for a job exiting $status"
  assert_eq "$attempts" 1 "attempts for a job exiting $status"
done
pass "stops on 1, 2, 4, 130, 138, 143"

# backoff: 1 s then 2 s before the two restarts (doubling).
start=$SECONDS
run_job 3 137 --backoff 1 -- "$TMP/job.sh" train
((SECONDS - start >= 3)) || fail "two restarts with --backoff 1 took $((SECONDS - start)) s, expected >= 3 (1 + 2)"
assert_contains "$(cat "$TMP/err")" "in 2s"
pass "exponential backoff"

# INT to the loop while the job runs: the job is asked to stop with SIGUSR1 (what mpirun and srun
# pass on to the ranks), no restart, exit 130.
cat >"$TMP/sleeper.sh" <<'JOB'
#!/usr/bin/env bash
echo "$*" >>"$LOG"
echo $$ >"$PIDFILE"
trap 'echo "got USR1" >>"$LOG.signals"; kill $!; exit 138' USR1
sleep 60 &
wait
JOB
chmod +x "$TMP/sleeper.sh"
: >"$TMP/log"
set -m   # job control: the loop must not start with SIGINT ignored, as background jobs of scripts do
LOG="$TMP/log" PIDFILE="$TMP/pid" "$AR" --backoff 0 -- "$TMP/sleeper.sh" train 2>"$TMP/err" &
ar_pid=$!
set +m
for _ in $(seq 100); do [[ -s "$TMP/pid" ]] && break; sleep 0.1; done
[[ -s "$TMP/pid" ]] || fail "the job did not start"
start=$SECONDS
kill -INT "$ar_pid"
rc=0; wait "$ar_pid" || rc=$?
assert_eq "$rc" 130 "exit status after INT"
((SECONDS - start < 10)) || fail "auto-resume took $((SECONDS - start)) s to stop after INT"
assert_eq "$(wc -l <"$TMP/log")" 1 "attempts after INT"
! kill -0 "$(cat "$TMP/pid")" 2>/dev/null || fail "the job (pid $(cat "$TMP/pid")) still runs after INT"
assert_eq "$(cat "$TMP/log.signals" 2>/dev/null)" "got USR1" "the signal the job got"
pass "INT stops the job (relayed as USR1) and the loop"
