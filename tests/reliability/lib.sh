# shellcheck shell=bash
# Shared helpers of the reliability tests (sourced). Every test runs the real thing: mpirun with
# real ranks, real signals, real files. Each gets a private temp dir (removed on exit) holding a
# tiny dataset and config, and asserts what the user sees: the exit status, the message, the time.
# usage of a test: NAME_test.sh ZEROTRAIN_BIN REPO MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
TEST_NAME=$(basename "$0" .sh)
ZEROTRAIN=$(realpath "$1")
REPO=$(realpath "$2")
MPIEXEC=$3
shift 3
MPI_FLAGS=("$@")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/zt-$TEST_NAME.XXXXXX")
BACKGROUND_PIDS=()
cleanup() {
  # A failed assertion must not leave a training job behind: end the ones this test started.
  for pid in "${BACKGROUND_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf -- "$TMP"
}
trap cleanup EXIT
cd "$TMP"
export OMPI_MCA_btl_vader_single_copy_mechanism=none

fail() { echo "FAIL ($TEST_NAME): $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
assert_contains() {  # HAYSTACK NEEDLE [what]
  [[ "$1" == *"$2"* ]] || fail "${3:-output} does not contain '$2'; it was:"$'\n'"$1"
}
assert_not_contains() {
  [[ "$1" != *"$2"* ]] || fail "${3:-output} contains '$2' but must not; it was:"$'\n'"$1"
}
assert_eq() { [[ "$1" == "$2" ]] || fail "${3:-value}: expected '$2', got '$1'"; }
assert_at_most() { (($1 <= $2)) || fail "${3:-value}: $1 is more than $2"; }
now_ms() { date +%s%3N; }

# A tiny byte-level dataset in data/ (train_000000.bin, val_000000.bin) and config.yaml that trains
# the tiny GPT-2 on it in a few ms per step, with checkpoints under run/checkpoints.
make_job() {
  local i
  # Paragraphs of 4 lines: prepare-data splits documents at blank lines and holds some out for validation.
  for i in $(seq 1 400); do
    echo "line $i: the quick brown fox jumps over the lazy dog, $((i * 7919 % 1000))"
    if ((i % 4 == 0)); then echo; fi
  done >corpus.txt
  "$ZEROTRAIN" prepare-data --input corpus.txt --output data >/dev/null 2>&1
  cat >config.yaml <<YAML
model: {preset: tiny, init_seed: 42}
data: {train_files: "data/train_*.bin", val_files: "data/val_*.bin"}
train: {device: cpu, train_micro_batch_size_per_gpu: 2, steps: 20, eval_interval: 0}
zero_optimization: {stage: 2, reduce_bucket_size: 25000}
checkpoint: {interval: 0}
logging: {run_dir: run, log_interval: 1}
comm: {timeout_s: 10}
YAML
}

# run_job NP [zerotrain train args...]: runs mpirun in the foreground, bounded by 120 s; sets
# rc, out (stdout+stderr) and ms (wall time).
run_job() {
  local np=$1
  shift
  local start
  start=$(now_ms)
  rc=0
  out=$(timeout -k 5 120 "$MPIEXEC" "${MPI_FLAGS[@]}" -np "$np" "$@" 2>&1) || rc=$?
  ms=$(($(now_ms) - start))
  [[ $rc != 124 && $rc != 137 ]] || fail "the job did not end by itself within 120 s; output:"$'\n'"$out"
}

# start_job NP LOG [args...]: mpirun in the background (bounded by 120 s); sets job_pid.
start_job() {
  local np=$1 log=$2
  shift 2
  timeout -k 5 120 "$MPIEXEC" "${MPI_FLAGS[@]}" -np "$np" "$@" >"$log" 2>&1 &
  job_pid=$!
  BACKGROUND_PIDS+=("$job_pid")
}

# wait_for_step METRICS STEP: until metrics.jsonl records STEP (at most 60 s).
wait_for_step() {
  local metrics=$1 step=$2 i
  for i in $(seq 1 600); do
    if [[ -f $metrics ]] && grep -q "\"step\":$step[,}]" "$metrics"; then return 0; fi
    sleep 0.1
  done
  fail "step $step never appeared in $metrics"
}

# rank_pids PID_OF_MPIRUN: the zerotrain processes mpirun started (its descendants), one per line.
rank_pids() {
  local parent=$1 pid
  for pid in $(pgrep -P "$parent"); do
    if [[ $(cat "/proc/$pid/comm" 2>/dev/null) == zerotrain ]]; then echo "$pid"; fi
    rank_pids "$pid"
  done
}

# The last "loss" a metrics.jsonl records (for comparing runs).
last_loss() { grep '"loss"' "$1" | tail -1 | sed -E 's/.*"loss":([^,}]*).*/\1/'; }

# crash_rank1_once SCRIPT PATTERN: writes SCRIPT, a wrapper of zerotrain that preloads
# tests/support/crash_on_open.c into rank 1, the first time only, so that rank 1 _exits as it
# opens a file whose path contains PATTERN (a file of a checkpoint being written, say).
crash_rank1_once() {
  cat >"$1" <<SH
#!/usr/bin/env bash
if [[ \$OMPI_COMM_WORLD_RANK == 1 && ! -e $TMP/crashed_once ]]; then
  touch $TMP/crashed_once
  export LD_PRELOAD=$ZT_CRASH_ON_OPEN_LIB ZT_CRASH_ON_OPEN=$2
fi
exec "$ZEROTRAIN" "\$@"
SH
  chmod +x "$1"
}

