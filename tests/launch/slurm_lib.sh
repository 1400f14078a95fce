# shellcheck shell=bash
# Shared by the tests that run a real Slurm cluster (sourced after lib.sh): skip (77) where
# slurm-cluster.sh cannot run, bring a 2-node cluster up under $TMP/cluster and take it down on
# every way out, a small dataset, and the zerotrain job they train.
# Sets BIN, REPO (absolute), C (the harness), D (the cluster's dir), ZT_SLURM_ID, h0, h1, JOB.
# Absolute: the ranks start in Slurm's working directory, not ours.
BIN=$(realpath -- "$1") REPO=$(realpath -- "$2")
C="$REPO/tests/launch/slurm-cluster.sh"

rc=0
reason=$("$C" check 2>&1) || rc=$?
if [[ $rc -eq 77 ]]; then echo "SKIP: $reason"; exit 77; fi
[[ $rc -eq 0 ]] || fail "slurm-cluster.sh check exited $rc: $reason"

D="$TMP/cluster"
# The cluster goes down on every way out (before lib.sh's removal of $TMP, which holds its files).
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  local rc=$?
  # A failure under load is rarely reproducible alone: what the job and the daemons said goes
  # with the failure, before the cluster and its files are gone.
  if ((rc != 0 && rc != 77)); then
    if [[ -n "${JOBLOG:-}" && -f "$JOBLOG" ]]; then
      echo "--- the job's log ($JOBLOG), its last 60 lines:" >&2
      tail -n 60 "$JOBLOG" >&2
    fi
    echo "--- the cluster's logs, their last 80 lines:" >&2
    "$C" logs "$D" 2>&1 | tail -n 80 >&2
  fi
  "$C" down "$D" >/dev/null 2>&1 || true
  rm -rf -- "$TMP"
  exit "$rc"
}
trap cleanup EXIT
# A signal ends the test through exit, so that the EXIT trap takes the cluster down.
trap 'exit 130' INT
trap 'exit 143' TERM
# slurm CMD...: CMD on the submit host (h0) with the cluster's SLURM_CONF.
slurm() { "$C" run "$D" -- "$@"; }

t0=$SECONDS
out=$("$C" up "$D" 2>&1) || fail "slurm-cluster.sh up failed:"$'\n'"$out"
# shellcheck disable=SC1091
source "$D/env"
h0="$ZT_SLURM_ID-h0" h1="$ZT_SLURM_ID-h1"
pass "cluster $ZT_SLURM_ID up in $((SECONDS - t0)) s"

# A small slice of the default dataset, prepared here so the tests need nothing else.
"$BIN" prepare-data --input /usr/share/games/fortunes/riddles --output "$TMP/data" --val-fraction 0.2 >/dev/null 2>&1
JOB=(train --config "$REPO/configs/default.yaml"
     --set "data.train_files=$TMP/data/train_*.bin" --set "data.val_files=$TMP/data/val_*.bin"
     --set train.eval_interval=0 --set train.sample_interval=0 --set train.train_micro_batch_size_per_gpu=2
     --set comm.timeout_s=60)

# job_field JOBID FIELD: a field of `scontrol show job` (JobState, ExitCode, Restarts, ...).
job_field() { slurm scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# wait_job_end JOBID SECONDS: until the job is COMPLETED, FAILED, CANCELLED or TIMEOUT (not a
# requeued attempt's end); fails with the job's log (JOBLOG) after SECONDS.
wait_job_end() {
  local id=$1 deadline=$((SECONDS + $2)) state
  while ((SECONDS < deadline)); do
    state=$(job_field "$id" JobState)
    case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL) echo "$state"; return 0 ;; esac
    sleep 1
  done
  fail "job $id did not end within $2 s (state $state); its log:"$'\n'"$(cat "${JOBLOG:-/dev/null}" 2>/dev/null)"$'\n'"$("$C" logs "$D")"
}

# steps RUN_DIR: the steps in metrics.jsonl, one line each.
steps() { python3 -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "loss" in r: print(r["step"])' "$1/metrics.jsonl"; }
# last_loss RUN_DIR: the loss of the last step in metrics.jsonl, as written.
last_loss() { grep '"loss"' "$1/metrics.jsonl" | tail -1 | sed -E 's/.*"loss":([^,}]*).*/\1/'; }
