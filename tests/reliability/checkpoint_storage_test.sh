#!/usr/bin/env bash
# Checkpoint storage that fails: (1) a checkpoint.dir through a regular file and (2) on a read-only
# mount are refused at start-up, before the first step, on every rank; (3) a filesystem that fills
# up (a 2 MiB tmpfs) fails the second save with the file and "No space left on device", keeps the
# first checkpoint complete, and a resume from it finishes the job; (4) too little free space is
# warned about at start-up. (2)-(4) need mounts (root): they run in a private mount namespace
# (unshare -m), so nothing outlives the test; without root they are skipped with the reason.
# usage: checkpoint_storage_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job

# (1) A parent that is a file: no root needed.
touch afile
run_job 2 "$ZEROTRAIN" train --config config.yaml --set checkpoint.interval=2 --set checkpoint.dir=afile/ck
assert_eq "$rc" 1 "exit status with checkpoint.dir under a regular file"
assert_contains "$out" "checkpoint.dir: cannot create afile/ck: Not a directory"
assert_contains "$out" "checkpoints cannot be written to afile/ck on 2 rank(s)"
assert_not_contains "$out" "step 1/" "output (no step may run)"
pass "checkpoint.dir under a file: refused before step 1 after $ms ms"
echo "timing: checkpoint_dir_not_a_directory ${ms}ms"

if [[ $(id -u) != 0 ]] || ! unshare -m true 2>/dev/null; then
  echo "skipping the mount cases: they need root and mount namespaces (unshare -m)"
  exit 0
fi
# The rest runs inside a private mount namespace; the helpers and variables come along.
export ZEROTRAIN REPO MPIEXEC TMP
export -f fail pass assert_contains assert_not_contains assert_eq assert_at_most now_ms run_job
unshare -m --propagation private bash -c '
set -euo pipefail
MPI_FLAGS=('"${MPI_FLAGS[*]}"')
cd "$TMP"

# (2) A read-only mount.
mkdir ro && mount --bind -o ro ro ro
run_job 2 "$ZEROTRAIN" train --config config.yaml --set checkpoint.interval=2 --set checkpoint.dir=ro/ck
assert_eq "$rc" 1 "exit status with a read-only checkpoint.dir"
assert_contains "$out" "checkpoint.dir: cannot create ro/ck: Read-only file system"
assert_not_contains "$out" "step 1/" "output (no step may run)"
pass "read-only checkpoint.dir: refused before step 1 after $ms ms"
echo "timing: checkpoint_dir_read_only ${ms}ms"

# (3) A disk that fills up: the first checkpoint (1.4 MiB) fits in 2 MiB, the second does not.
mkdir full && mount -t tmpfs -o size=2m tmpfs full
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=8 --set checkpoint.interval=2 \
  --set checkpoint.keep_last=0 --set checkpoint.dir=full/ck
(( rc != 0 )) || fail "the job exited 0 although its checkpoint could not be written"
assert_contains "$out" "cannot write full/ck/step_00000004.tmp/"
assert_contains "$out" "No space left on device"
[[ -f full/ck/step_00000002/COMPLETE ]] || fail "the previous checkpoint full/ck/step_00000002 is not complete"
[[ ! -e full/ck/step_00000004 ]] || fail "a checkpoint of step 4 claims to be complete"
pass "disk full at the second save: exit $rc, the file and ENOSPC named, step 2 kept"
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=8 --set checkpoint.interval=0 \
  --set checkpoint.dir=full/ck --resume full/ck/step_00000002
assert_eq "$rc" 0 "exit status of the resume from the kept checkpoint"
assert_contains "$out" "resumed from full/ck/step_00000002 (step 2"
assert_contains "$out" "step 8/8"
pass "resumed from the kept checkpoint and finished"

# (4) Less free space than one checkpoint: a warning at start-up (the job still runs: space on
# shared filesystems comes and goes).
mkdir small && mount -t tmpfs -o size=1m tmpfs small
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=1 --set checkpoint.interval=100 \
  --set checkpoint.dir=small/ck
assert_contains "$out" "checkpoint.dir: small/ck has 1.00 MiB free but a checkpoint takes about 1.38 MiB"
pass "too little space: warned at start-up"
'
