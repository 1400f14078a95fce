#!/usr/bin/env bash
# Checkpoints belong to the run that saved them (a run id in the manifest, kept by --resume):
# (1) a new run (resume: none) in a checkpoint.dir holding another run's checkpoints is refused
# before step 1, and the other run's checkpoints are untouched; (2) pruning keeps the newest saves
# of this run, not the highest steps; (3) --resume auto refuses a directory mixing two runs;
# (4) checkpoint.dir must be the same directory on every rank: ranks started in two directories
# (mpirun -wdir, so that the relative checkpoint.dir differs while the config is the same) stop
# before step 1 when resuming (rank 1 lacks the checkpoint rank 0 resumes from) and when starting
# fresh (rank 1 does not see rank 0's files); (5) two runs at once on one directory: the second is
# refused, the first keeps the directory until it ends; (7) a restart waits for ranks of the earlier
# run that are still ending.
# usage: checkpoint_runs_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job
ck=run/checkpoints
train() { run_job 2 "$ZEROTRAIN" train --config config.yaml "$@"; }

# Run A: 20 steps, saves every 5, keeps 2 -> steps 15 and 20.
train --set checkpoint.interval=5 --set checkpoint.keep_last=2
assert_eq "$rc" 0 "exit status of run A; output: $out"
[[ -d $ck/step_00000015 && -d $ck/step_00000020 && ! -e $ck/step_00000010 ]] || fail "run A kept $(ls $ck)"
run_a=$(grep -o '"run_id": *"[0-9a-f]*"' $ck/step_00000020/manifest.json | grep -o '[0-9a-f]\{32\}')
[[ -n $run_a ]] || fail "run A's manifest has no run id"
a_sums=$(cat $ck/*/manifest.json | sha256sum)

# (1) Run B, from scratch, same directory.
train --set train.steps=10 --set checkpoint.interval=5 --set checkpoint.keep_last=2
assert_eq "$rc" 1 "exit status of a new run over another run's checkpoints"
assert_contains "$out" "checkpoint.dir run/checkpoints holds 2 checkpoint(s) of another run: step_00000015 (run $run_a), step_00000020 (run $run_a); a new run (checkpoint.resume: none) would mix its saves with them"
assert_not_contains "$out" "step 1/" "output (no step may run)"
assert_eq "$(cat $ck/*/manifest.json | sha256sum)" "$a_sums" "run A's checkpoints after the refused run B"
pass "a new run over another run's checkpoints: refused before step 1, nothing touched"

# (2) Resume run A from its older checkpoint and stop at 18 with keep_last 1: the save of step 18
# is the newest, so step 20 (an older save) goes, not the checkpoint just written.
train --resume $ck/step_00000015 --set train.steps=18 --set checkpoint.interval=5 --set checkpoint.keep_last=1
assert_eq "$rc" 0 "exit status of the resumed run A; output: $out"
[[ -f $ck/step_00000018/COMPLETE ]] || fail "the newest save (step 18) was pruned; left: $(ls $ck)"
[[ ! -e $ck/step_00000020 ]] || fail "the older save of step 20 was kept instead of the newest; left: $(ls $ck)"
grep -q "\"run_id\": *\"$run_a\"" $ck/step_00000018/manifest.json || fail "the resumed run changed its run id"
train --resume auto --set train.steps=18
assert_contains "$out" "resumed from $ck/step_00000018 (step 18"
pass "pruning by save order: the newest save (step 18) kept, the older step 20 removed; the run id kept"

# (3) A directory mixing two runs: --resume auto cannot tell which to continue.
mkdir other && (cd other && cp -r ../data ../config.yaml . &&
  timeout 120 "$ZEROTRAIN" train --config config.yaml --set train.steps=2 --set checkpoint.interval=2 >/dev/null 2>&1) ||
  fail "the other run failed"
cp -r other/$ck/step_00000002 $ck/
train --resume auto --set train.steps=20
assert_eq "$rc" 1 "exit status of --resume auto over two runs' checkpoints"
assert_contains "$out" "holds the checkpoints of 2 runs"
assert_contains "$out" "resume: auto cannot tell which to continue"
rm -rf $ck/step_00000002
pass "--resume auto over two runs: refused"

# (4) Per-rank directories: the same relative checkpoint.dir, two different directories.
mpmd() {  # DIR0 DIR1 ARGS...: rank 0 runs in DIR0, rank 1 in DIR1
  local d0=$1 d1=$2
  shift 2
  rc=0
  out=$(timeout -k 5 120 "$MPIEXEC" "${MPI_FLAGS[@]}" -np 1 -wdir "$d0" "$ZEROTRAIN" train --config config.yaml "$@" : \
    -np 1 -wdir "$d1" "$ZEROTRAIN" train --config config.yaml "$@" 2>&1) || rc=$?
}
mkdir node0 node1
for n in node0 node1; do cp -r data config.yaml "$n/"; done
(cd node0 && timeout 120 "$ZEROTRAIN" train --config config.yaml --set train.steps=10 --set checkpoint.interval=5 \
  --set checkpoint.keep_last=0 >/dev/null 2>&1) || fail "the single-rank run in node0 failed"
cp -r node0/run node1/ && rm -rf node1/$ck/step_00000010  # node1's copy lacks the newest checkpoint
mpmd "$TMP/node0" "$TMP/node1" --resume auto --set train.steps=20 --set checkpoint.interval=5
assert_eq "$rc" 1 "exit status when rank 1 does not see rank 0's checkpoint"
assert_contains "$out" "rank(s) 1 do not see the checkpoint rank 0 resumes from (run/checkpoints/step_00000010, step 10"
assert_contains "$out" "checkpoint.dir must be one directory shared by all ranks"
assert_not_contains "$out" "step 11/" "output (no step may run)"
pass "per-rank checkpoint directories on resume: stopped before step 1, rank 1 named"
rm -rf node0/run node1/run
mpmd "$TMP/node0" "$TMP/node1" --set train.steps=4 --set checkpoint.interval=2
assert_eq "$rc" 1 "exit status when checkpoint.dir differs between ranks"
assert_contains "$out" "checkpoint.dir run/checkpoints is not the same directory on every rank: rank(s) 1 do not see"
assert_not_contains "$out" "step 1/" "output (no step may run)"
pass "per-rank checkpoint directories from scratch: stopped before step 1, rank 1 named"

# (5) Two runs at once on one checkpoint.dir: the second is refused before step 1, naming the
# first's process, and the first goes on to its end with its checkpoints its own; once it has
# ended, the directory takes a run again.
rm -rf run
start_job 2 first.log "$ZEROTRAIN" train --config config.yaml --set train.steps=100000 --set checkpoint.interval=50 \
  --set checkpoint.keep_last=0
first_pid=$job_pid
wait_for_step run/metrics.jsonl 3
train --resume auto --set train.steps=100000 --set checkpoint.interval=50
assert_eq "$rc" 1 "exit status of a second run on a checkpoint.dir in use"
assert_contains "$out" "checkpoint.dir: run/checkpoints is in use by another run (pid "
assert_contains "$out" "one directory takes one run"
assert_not_contains "$out" "step 1/" "output (no step may run)"
kill -TERM $(rank_pids "$(pgrep -P "$first_pid")")
wait "$first_pid" || true
grep -qE "SIGTERM received( by another rank)?: stopping after step" first.log || fail "no stop line:"$'\n'"$(cat first.log)"
last=$(grep -o '"step":[0-9]*' run/metrics.jsonl | tail -1 | cut -d: -f2)
[[ -f $(printf "$ck/step_%08d" "$last")/COMPLETE ]] || fail "the first run's final checkpoint is missing: $(ls $ck)"
train --resume auto --set train.steps=$((last + 2))
assert_eq "$rc" 0 "exit status of a run after the first one ended; output: $out"
pass "two runs on one checkpoint.dir: the second refused before step 1; the directory free again after the first"

# (6) A run started from Hugging Face weights (model.init_from, its shape read from config.json)
# resumes after the Hugging Face directory is gone: resuming reads none of its weights, and the
# resolved shape is the checkpoint's (not the default preset's: 2 layers, not 3, and 64 positions,
# fewer than the data.seq_len of 128 the config asks for).
train --set model.n_layer=3 --set model.block_size=128 --set data.seq_len=128 --set train.steps=2 \
  --set checkpoint.interval=2 --set logging.run_dir=src_run
assert_eq "$rc" 0 "exit status of the run the weights come from; output: $out"
"$ZEROTRAIN" export --checkpoint src_run/checkpoints/step_00000002 --format hf --output hf_weights >/dev/null ||
  fail "the hf export failed"
cat >init.yaml <<YAML
model: {init_from: hf_weights}
data: {train_files: "data/train_*.bin", val_files: "data/val_*.bin", seq_len: 128}
train: {device: cpu, train_micro_batch_size_per_gpu: 2, steps: 4, eval_interval: 0}
checkpoint: {interval: 2}
logging: {run_dir: init_run, log_interval: 1}
comm: {timeout_s: 10}
YAML
run_job 2 "$ZEROTRAIN" train --config init.yaml
assert_eq "$rc" 0 "exit status of the run from model.init_from; output: $out"
mv hf_weights hf_weights.gone
run_job 2 "$ZEROTRAIN" train --config init.yaml --set train.steps=6 --resume auto
assert_eq "$rc" 0 "exit status of the resumed run whose init_from is gone; output: $out"
assert_contains "$out" "model.init_from hf_weights has no config.json (moved or deleted?): the model's shape is that of the checkpoint"
assert_contains "$out" "resumed from init_run/checkpoints/step_00000004"
assert_contains "$out" "step 6/6"
pass "a run from model.init_from resumes with the checkpoint's shape after the Hugging Face directory is gone"

# (7) Ranks of an earlier attempt that outlive their launcher (remote ranks, a second or two after
# mpirun) still hold their share of <checkpoint.dir>/.zerotrain.ranks: a restart waits until they
# are gone before it reads the directory. Here a process holds a share for 3 s.
rm -rf run
train --set train.steps=2 --set checkpoint.interval=2
assert_eq "$rc" 0 "exit status of the first attempt; output: $out"
flock -s run/checkpoints/.zerotrain.ranks bash -c 'touch holding; sleep 3' &
BACKGROUND_PIDS+=("$!")
for _ in $(seq 1 100); do [[ -e holding ]] && break; sleep 0.05; done
train --set train.steps=4 --set checkpoint.interval=2 --resume auto
assert_eq "$rc" 0 "exit status of the restart; output: $out"
assert_contains "$out" "checkpoint.dir: waiting for the ranks of an earlier run to end (they hold run/checkpoints/.zerotrain.ranks)"
assert_contains "$out" "checkpoint.dir: the earlier run's ranks ended after"
assert_contains "$out" "resumed from run/checkpoints/step_00000002"
((ms >= 2500)) || fail "the restart took $ms ms: it did not wait for the holder"
pass "a restart waited for the earlier run's ranks ($ms ms), then resumed"

# (7b) The earlier attempt's rank 0 itself still ending (it holds <checkpoint.dir>/.zerotrain.lock
# for 3 s): the restart waits for it (up to 10 s) rather than refusing the directory as in use.
rm -f holding
flock -x run/checkpoints/.zerotrain.lock bash -c 'touch holding; sleep 3' &
BACKGROUND_PIDS+=("$!")
for _ in $(seq 1 100); do [[ -e holding ]] && break; sleep 0.05; done
train --set train.steps=6 --set checkpoint.interval=2 --resume auto
assert_eq "$rc" 0 "exit status of the restart while the earlier rank 0 ends; output: $out"
assert_contains "$out" "checkpoint.dir: run/checkpoints/.zerotrain.lock is held by another process"
assert_contains "$out" "checkpoint.dir: the run that held run/checkpoints/.zerotrain.lock ended after"
assert_contains "$out" "resumed from run/checkpoints/step_00000004"
((ms >= 2500)) || fail "the restart took $ms ms: it did not wait for the lock's holder"
pass "a restart waited for the earlier attempt's rank 0 ($ms ms), then resumed"
