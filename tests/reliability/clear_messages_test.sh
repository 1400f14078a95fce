#!/usr/bin/env bash
# Mistakes and mishaps that used to give an unclear message or a wrong result: (1) resuming at or
# past train.steps says there is nothing to train and exits 0; (2) a --set value that is not UTF-8
# and (3) a logging.run_dir that cannot be created are named, not "internal error"; (4) a run_dir
# that fills up (a 16 KiB tmpfs) warns once about metrics.jsonl, keeps whole lines only, trains to
# the end and names the records lost; logging.on_write_error: fail ends the job instead. (4) needs
# mounts (root): it runs in a private mount namespace, or is skipped with the reason.
# usage: clear_messages_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job

# (1) Resume at or past train.steps.
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=4 --set checkpoint.interval=2
assert_eq "$rc" 0 "exit status of the first run; output: $out"
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=4 --resume auto
assert_eq "$rc" 0 "exit status of a resume at train.steps"
assert_contains "$out" "nothing to train: the run resumed after step 4 and train.steps is 4; raise train.steps (e.g. --set train.steps=8)"
assert_not_contains "$out" "done: 0 steps"
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=3 --resume auto
assert_eq "$rc" 0 "exit status of a resume past train.steps"
assert_contains "$out" "nothing to train: the run resumed after step 4 and train.steps is 3"
pass "resume at or past train.steps: 'nothing to train', exit 0"

# (2) A --set value that is not UTF-8.
rc=0
out=$("$ZEROTRAIN" train --config config.yaml --set $'logging.run_dir=run\xff' 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status of a --set value that is not UTF-8"
assert_contains "$out" "--set logging.run_dir: the value is not valid UTF-8 (byte 0xff at offset 3)"
assert_not_contains "$out" "internal error"
pass "a non-UTF-8 --set value: named, exit 2"

# (3) A run_dir that cannot be created.
touch afile
run_job 1 "$ZEROTRAIN" train --config config.yaml --set train.steps=2 --set logging.run_dir=afile/run
assert_eq "$rc" 1 "exit status with an uncreatable run_dir"
assert_contains "$out" "logging.run_dir afile/run: cannot create it: Not a directory"
assert_not_contains "$out" "internal error"
pass "an uncreatable run_dir: named, exit 1"

if [[ $(id -u) != 0 ]] || ! unshare -m true 2>/dev/null; then
  echo "skipping the mount cases: they need root and mount namespaces (unshare -m)"
  exit 0
fi
export ZEROTRAIN REPO MPIEXEC TMP
export -f fail pass assert_contains assert_not_contains assert_eq assert_at_most now_ms run_job
unshare -m --propagation private bash -c '
set -euo pipefail
MPI_FLAGS=('"${MPI_FLAGS[*]}"')
cd "$TMP"

# (3b) A read-only run_dir.
mkdir ro && mount --bind -o ro ro ro
run_job 1 "$ZEROTRAIN" train --config config.yaml --set train.steps=2 --set logging.run_dir=ro
assert_eq "$rc" 1 "exit status with a read-only run_dir"
assert_contains "$out" "ro/config.yaml: cannot create a temporary file beside it: Read-only file system"
assert_not_contains "$out" "internal error"
pass "a read-only run_dir: named, exit 1"

# (4) A run_dir that fills up.
mkdir full && mount -t tmpfs -o size=16k tmpfs full
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=80 --set logging.run_dir=full
assert_eq "$rc" 0 "exit status when metrics.jsonl cannot grow (on_write_error: warn)"
warnings=$(grep -c "cannot write the metrics record of step" <<<"$out" || true)
assert_eq "$warnings" 1 "warnings about metrics.jsonl"
assert_contains "$out" "No space left on device; training goes on"
assert_contains "$out" "metrics record(s) could not be written to full/metrics.jsonl"
assert_contains "$out" "step 80/80"
[[ $(tail -c 1 full/metrics.jsonl | od -An -c | tr -d " ") == "\n" ]] || fail "metrics.jsonl ends in a partial line"
python3 -c "import json,sys; [json.loads(l) for l in open(sys.argv[1])]" full/metrics.jsonl ||
  fail "metrics.jsonl holds a line that is not JSON"
pass "a full disk under metrics.jsonl: one warning, whole lines only, trained to the end, losses named"
umount full && mount -t tmpfs -o size=16k tmpfs full
run_job 1 "$ZEROTRAIN" train --config config.yaml --set train.steps=80 --set logging.run_dir=full \
  --set logging.on_write_error=fail
assert_eq "$rc" 1 "exit status when metrics.jsonl cannot grow (on_write_error: fail)"
assert_contains "$out" "to full/metrics.jsonl: No space left on device (logging.on_write_error: fail stops the job)"
assert_not_contains "$out" "step 80/80"
pass "on_write_error: fail ends the job naming the file and the error"
'
