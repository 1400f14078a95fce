#!/usr/bin/env bash
# The GPU kit's tables (tools/gpu-kit/report.py) from real runs on the CPU: GoogleTest logs of a
# real test binary, real training runs' metrics.jsonl.
#   report_test.sh ZEROTRAIN TEST_BINARY REPO_ROOT MPIEXEC [MPI FLAGS...]
set -euo pipefail
zerotrain=$1 test_bin=$2 root=$3 mpiexec=$4; shift 4
mpi_flags=("$@")
report=$root/tools/gpu-kit/report.py
fail() { echo "FAIL (gpukit.report): $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-gpukit-report.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# tests: the counts are GoogleTest's own, and a failed exit status fails the table.
"$test_bin" > "$tmp/all.log" 2>&1 || fail "$test_bin failed on its own: $(tail -20 "$tmp/all.log")"
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$tmp/all.log")
skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?, listed below:/\1/p' "$tmp/all.log")
printf 'bin\t1\t0\t%s\n' "$tmp/all.log" > "$tmp/runs.tsv"
python3 "$report" tests "$tmp/runs.tsv" "$tmp/tests.md" > /dev/null || fail "a passing run was reported as failed: $(cat "$tmp/tests.md")"
grep -q "^${passed} passed, 0 failed, ${skipped:-0} skipped; 0 of 1 runs failed" "$tmp/tests.md" ||
  fail "expected $passed passed and ${skipped:-0} skipped (GoogleTest's summary); the table says: $(head -3 "$tmp/tests.md")"
printf 'bin\t2\t1\t%s\n' "$tmp/all.log" > "$tmp/runs.tsv"
if python3 "$report" tests "$tmp/runs.tsv" "$tmp/tests.md" > /dev/null; then fail "exit status 1 was reported as a pass"; fi
grep -q '| bin | 2 | .* | FAIL |' "$tmp/tests.md" || fail "the failed run is not marked FAIL: $(cat "$tmp/tests.md")"
echo "ok: tests table ($passed passed, ${skipped:-0} skipped, as GoogleTest counted; a non-zero exit fails it)"

# Every CUDA case skipped (here: no GPU) is "all skipped" on a machine without a GPU, and a failure
# that names the skip reason when the kit saw a GPU (nvidia-smi) the CUDA runtime cannot use.
"$test_bin" --gtest_filter='*Cuda*' > "$tmp/cuda.log" 2>&1 || fail "the CUDA cases failed: $(tail -20 "$tmp/cuda.log")"
if grep -q '^\[  SKIPPED \]' "$tmp/cuda.log" && ! grep -q '^\[       OK \]' "$tmp/cuda.log"; then
  printf 'bin\t1\t0\t%s\n' "$tmp/cuda.log" > "$tmp/runs.tsv"
  python3 "$report" tests "$tmp/runs.tsv" "$tmp/tests.md" > /dev/null || fail "all-skipped without a GPU failed: $(cat "$tmp/tests.md")"
  grep -q '| all skipped |' "$tmp/tests.md" || fail "not marked all skipped: $(cat "$tmp/tests.md")"
  if python3 "$report" tests "$tmp/runs.tsv" "$tmp/tests.md" --gpu-visible > /dev/null; then
    fail "every CUDA case skipped with a GPU visible was reported as a pass"
  fi
  grep -q '^FAIL: a GPU is visible but every CUDA case skipped; the reasons: .*no CUDA device visible' "$tmp/tests.md" ||
    fail "the all-skipped failure does not name the reason: $(head -5 "$tmp/tests.md")"
  echo "ok: every CUDA case skipped fails the table when a GPU is visible, and names the reason"
elif grep -q '^\[       OK \]' "$tmp/cuda.log"; then
  echo "note: a GPU is usable here, so the all-skipped check has nothing to skip"
else
  fail "$test_bin has no *Cuda* case to check the all-skipped rule with"
fi

# repro: two identical CPU runs are bitwise equal; other initial weights differ from the first step on.
data=$tmp/data
"$zerotrain" prepare-data --input "$root/README.md" --output "$data" --val-fraction 0.1 > /dev/null
run() {  # RUN_DIR [--set ...]
  local dir=$1; shift
  "$mpiexec" "${mpi_flags[@]}" -np 2 "$zerotrain" train --config "$root/configs/default.yaml" \
    --set "data.train_files=$data/train_*.bin" --set "data.val_files=" --set train.steps=4 \
    --set train.eval_interval=0 --set checkpoint.interval=0 --set logging.run_dir="$dir" "$@" > "$dir.log" 2>&1 ||
    fail "training run $dir failed: $(tail -20 "$dir.log")"
}
run "$tmp/a"; run "$tmp/b"; run "$tmp/c" --set model.init_seed=7
python3 "$report" repro "$tmp/repro.md" "$tmp/a" "$tmp/b" > /dev/null || fail "identical runs reported different: $(cat "$tmp/repro.md")"
grep -q '| 4 / 4 | .* | identical |' "$tmp/repro.md" || fail "$(cat "$tmp/repro.md")"
if python3 "$report" repro "$tmp/repro.md" "$tmp/a" "$tmp/c" > /dev/null; then fail "runs from different initial weights reported identical"; fi
grep -q 'step 1: .* DIFFERENT' "$tmp/repro.md" || fail "the first difference is not named: $(cat "$tmp/repro.md")"
echo "ok: repro table (identical runs equal, other weights different from step 1)"

# overlap and stages read the same metrics.jsonl: medians after the warm-up, CPU against CPU.
python3 "$report" overlap 1 "$tmp/overlap.md" "a=$tmp/a" "b=$tmp/b" > /dev/null || fail "$(cat "$tmp/overlap.md")"
grep -q '| a | [0-9.]* | ' "$tmp/overlap.md" || fail "no medians for run a: $(cat "$tmp/overlap.md")"
printf '2\t2\t0\t%s\t%s\n' "$tmp/a" "$tmp/b" > "$tmp/stages.tsv"
python3 "$report" stages "$tmp/stages.tsv" "$tmp/stages.md" > /dev/null || fail "$(cat "$tmp/stages.md")"
printf '2\t2\t0\t%s\t%s\n' "$tmp/a" "$tmp/missing" > "$tmp/stages.tsv"
if python3 "$report" stages "$tmp/stages.tsv" "$tmp/stages.md" > /dev/null; then fail "a run without metrics passed"; fi
echo "ok: overlap and stages tables"

# sanitizer: the summary lines compute-sanitizer prints (copied from runs on an H100): memcheck's
# "ERROR SUMMARY" once per rank, racecheck's "RACECHECK SUMMARY ... (N errors, ...)".
printf '========= ERROR SUMMARY: 0 errors\n========= ERROR SUMMARY: 0 errors\n' > "$tmp/memcheck.log"
printf '========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n' > "$tmp/racecheck.log"
printf '========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)\n' > "$tmp/racecheck-bad.log"
printf 'memcheck\t2\t0\t%s\nracecheck\t1\t0\t%s\n' "$tmp/memcheck.log" "$tmp/racecheck.log" > "$tmp/sanitizer.tsv"
python3 "$report" sanitizer "$tmp/sanitizer.tsv" "$tmp/sanitizer.md" > /dev/null || fail "clean sanitizer runs failed: $(cat "$tmp/sanitizer.md")"
printf 'racecheck\t1\t0\t%s\n' "$tmp/racecheck-bad.log" > "$tmp/sanitizer.tsv"
if python3 "$report" sanitizer "$tmp/sanitizer.tsv" "$tmp/sanitizer.md" > /dev/null; then fail "a racecheck error passed"; fi
grep -q '| racecheck | 1 | 0 | 1 | FAIL |' "$tmp/sanitizer.md" || fail "$(cat "$tmp/sanitizer.md")"
echo "ok: sanitizer table (memcheck and racecheck summaries)"
