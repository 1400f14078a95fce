#!/usr/bin/env bash
# A model too big for the machine (n_embd 65536: about 10^11 parameters, terabytes of model states)
# stops at start-up, before allocating, on every rank, with the planned and the available memory
# named; not the OOM killer, not `internal error: std::bad_alloc`.
# usage: out_of_memory_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job

run_job 2 "$ZEROTRAIN" train --config config.yaml --set model.n_embd=65536
assert_eq "$rc" 1 "exit status of a run whose model does not fit"
assert_contains "$out" "not enough memory: the run needs"
assert_contains "$out" "per rank x 2 ranks on this host = "
assert_contains "$out" "but host memory has "
assert_contains "$out" "available (MemAvailable in /proc/meminfo"
assert_contains "$out" "the planned memory does not fit on 2 rank(s) (see their errors); stopping before allocating it"
assert_not_contains "$out" "bad_alloc"
assert_not_contains "$out" "step 1/" "output (no rank may start training)"
assert_at_most "$ms" 30000 "ms to refuse a model that does not fit"
pass "n_embd 65536: exit $rc after $ms ms: $(grep -m1 'not enough memory' <<<"$out")"
echo "timing: out_of_memory ${ms}ms"

# The same config at its normal size trains.
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=2
assert_eq "$rc" 0 "exit status of the tiny model"
pass "the tiny model fits and trains"

# An address-space limit (ulimit -v) too low to start under: OpenBLAS's worker threads retried
# their buffer allocation forever and MPI's start-up waited on them, a hang with no message. From
# below the libraries' own mappings upward, every run ends within seconds with the loader's error,
# the limit named, or the command's own error; never a hang or an internal error.
named=0
for kib in $(seq 600000 100000 2400000); do
  rc=0
  out=$( (ulimit -v "$kib" && timeout 30 "$ZEROTRAIN" eval --checkpoint missing-dir) 2>&1 ) || rc=$?
  ((rc != 124)) || fail "ulimit -v $kib: zerotrain hung (killed after 30 s)"
  assert_not_contains "$out" "internal error"
  case $out in
    *"the address-space limit (ulimit -v) is"*) named=$((named + 1)); assert_eq "$rc" 1 "exit status under ulimit -v $kib" ;;
    *"error while loading shared libraries"*) ;;  # the dynamic loader's message, before zerotrain runs
    *"checkpoint missing-dir does not exist"*) assert_eq "$rc" 1 "exit status of eval with room to start" ;;
    *) fail "ulimit -v $kib: unexpected output (exit $rc): $out" ;;
  esac
done
((named > 0)) || fail "no limit from 600 MB to 2.4 GB was refused with the limit named"
pass "ulimit -v from 600 MB to 2.4 GB: no hang; $named limits refused with the limit named"
