#!/usr/bin/env bash
# Paths and files chosen by someone else must not make zerotrain run commands, write outside the
# directories the user named, or lose data: (1) `plot` with a run directory and an --output holding
# a line break and a gnuplot `!command`; (2) symbolic links planted at the start-up write probe,
# config.yaml and metrics.jsonl; (3) a manifest naming shard files outside its checkpoint; (4)
# `export` into the checkpoint it reads, and a failed export over an earlier good file, (4b) an hf
# export that fails or is killed midway; (5) `prepare-data` with bad inputs over an existing
# dataset; (6) named pipes at config.json, manifest.json and dataset.json.
# usage: hostile_paths_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job

# (1) plot: the newline ends gnuplot's string, and `!cmd` on a line of its own runs a shell.
evil_run="$TMP/run"$'\n'"!touch $TMP/pwned_by_run_dir"$'\n'
mkdir -p "$evil_run"
for step in 1 2 3; do echo "{\"step\":$step,\"loss\":$((4 - step)).5,\"tokens_per_s\":1000}"; done >"$evil_run/metrics.jsonl"
if command -v gnuplot >/dev/null; then
  rc=0
  out=$("$ZEROTRAIN" plot "$evil_run" 2>&1) || rc=$?
  [[ ! -e $TMP/pwned_by_run_dir ]] || fail "plot ran a command hidden in the run directory's name"
  assert_eq "$rc" 0 "exit status of plot with a line break in the run directory"
  [[ -s $evil_run/curves.png ]] || fail "plot wrote no picture into the run directory"
  evil_png="$TMP/out"$'\n'"!touch $TMP/pwned_by_output"$'\n'".png"
  rc=0
  out=$("$ZEROTRAIN" plot "$evil_run" --output "$evil_png" 2>&1) || rc=$?
  [[ ! -e $TMP/pwned_by_output ]] || fail "plot ran a command hidden in --output"
  assert_eq "$rc" 0 "exit status of plot with a line break in --output"
  [[ -s $evil_png ]] || fail "plot wrote no picture to the --output with a line break"
  # A link planted at the picture's path is replaced, never written through.
  echo precious >victim_png
  ln -s "$TMP/victim_png" "$evil_run/link.png"
  "$ZEROTRAIN" plot "$evil_run" --output "$evil_run/link.png" >/dev/null 2>&1 || fail "plot over a link failed"
  assert_eq "$(cat victim_png)" precious "the file a planted link at --output points to"
  pass "plot: line breaks and '!command' in paths run nothing; pictures written"
else
  echo "skipping the plot case: gnuplot is not installed"
fi

# (2) Links planted in the run directory must neither be followed nor truncate their targets.
mkdir -p run/checkpoints
echo precious >victim_probe
echo precious >victim_config
for r in 0 1; do ln -s "$TMP/victim_probe" "run/checkpoints/.write_probe.rank$r"; done
ln -s "$TMP/victim_config" run/config.yaml
run_job 2 "$ZEROTRAIN" train --config config.yaml --set train.steps=2 --set checkpoint.interval=2
assert_eq "$rc" 0 "exit status of a run with links planted in run_dir; output: $out"
assert_eq "$(cat victim_probe)" precious "the file a link at the old write-probe name points to"
assert_eq "$(cat victim_config)" precious "the file a link at run/config.yaml points to"
[[ -f run/config.yaml && ! -L run/config.yaml ]] || fail "run/config.yaml is not a regular file after the run"
echo precious >victim_metrics
rm -rf run && mkdir run && ln -s "$TMP/victim_metrics" run/metrics.jsonl
run_job 1 "$ZEROTRAIN" train --config config.yaml --set train.steps=2
assert_eq "$rc" 1 "exit status with a link at metrics.jsonl"
assert_contains "$out" "run/metrics.jsonl: is a symbolic link; refusing to write through it"
assert_eq "$(cat victim_metrics)" precious "the file a link at metrics.jsonl points to"
pass "links at the write probe, config.yaml and metrics.jsonl: never followed"

# (3) A manifest naming files outside its checkpoint.
rm -rf run
run_job 1 "$ZEROTRAIN" train --config config.yaml --set train.steps=2 --set checkpoint.interval=2
assert_eq "$rc" 0 "exit status of the run that saves a checkpoint; output: $out"
ck=run/checkpoints/step_00000002
# A file outside with the right size and CRC: a reader that follows the name exports it happily.
cp "$ck/rank_00000.master.f32" outside.f32
for name in ../outside.f32 "$TMP/outside.f32"; do
  cp -r "$ck" evil_ck && rm -f evil_ck/rank_00000.master.f32
  sed -i "s#\"rank_00000.master.f32\"#\"$name\"#" evil_ck/manifest.json
  grep -q "outside.f32" evil_ck/manifest.json || fail "the test did not plant $name in the manifest"
  rc=0
  out=$("$ZEROTRAIN" export --checkpoint evil_ck --output evil.safetensors 2>&1) || rc=$?
  assert_eq "$rc" 1 "exit status of an export of a manifest naming $name"
  assert_contains "$out" "is not a file this checkpoint format has"
  [[ ! -e evil.safetensors ]] || fail "an export from a manifest naming $name wrote a file"
  rm -rf evil_ck
done
pass "manifest entries outside the checkpoint (../x, absolute): refused"

# (4) export: never into the checkpoint it reads; a failed export keeps the earlier file.
before=$(sha256sum "$ck/rank_00000.master.f32")
rc=0
out=$("$ZEROTRAIN" export --checkpoint "$ck" --output "$ck/rank_00000.master.f32" 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of an export into its own checkpoint"
assert_contains "$out" "lies inside the checkpoint"
assert_eq "$(sha256sum "$ck/rank_00000.master.f32")" "$before" "the checkpoint's shard after a refused export"
"$ZEROTRAIN" export --checkpoint "$ck" --output good.safetensors >/dev/null || fail "a plain export failed"
good=$(sha256sum <good.safetensors)
cp -r "$ck" corrupt_ck
printf 'XXXX' | dd of=corrupt_ck/rank_00000.master.f32 bs=1 seek=8 conv=notrunc status=none
rc=0
out=$("$ZEROTRAIN" export --checkpoint corrupt_ck --output good.safetensors 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of an export from a corrupt checkpoint"
assert_contains "$out" "is corrupt: CRC32"
assert_eq "$(sha256sum <good.safetensors)" "$good" "the earlier export after a failed one"
[[ -z $(find . -maxdepth 1 -name '.good.safetensors.tmp-*') ]] || fail "a failed export left its temporary file"
pass "export: refused inside its checkpoint; a failed export leaves the earlier file intact"

# (4b) export --format hf appears whole or not at all: a corrupt checkpoint, and a crash while the
# directory is written (on opening its config.json), leave no directory that blocks the next
# export; a directory with files in it is never written into.
rc=0
out=$("$ZEROTRAIN" export --checkpoint corrupt_ck --format hf --output hf_out 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of an hf export from a corrupt checkpoint"
[[ ! -e hf_out ]] || fail "a failed hf export left hf_out: $(ls -la hf_out)"
[[ -z $(find . -maxdepth 1 -name '.hf_out.tmp-*') ]] || fail "a failed hf export left its temporary directory"
rc=0
out=$(LD_PRELOAD=$ZT_CRASH_ON_OPEN_LIB ZT_CRASH_ON_OPEN=/config.json "$ZEROTRAIN" export --checkpoint "$ck" --format hf \
  --output hf_out 2>&1) || rc=$?
assert_eq "$rc" 86 "exit status of an hf export killed while writing config.json"
[[ ! -e hf_out ]] || fail "an hf export killed midway left hf_out: $(ls -la hf_out)"
"$ZEROTRAIN" export --checkpoint "$ck" --format hf --output hf_out >/dev/null || fail "an hf export after a crashed one failed"
[[ -s hf_out/model.safetensors && -s hf_out/config.json ]] || fail "the hf export is incomplete: $(ls -la hf_out)"
rc=0
out=$("$ZEROTRAIN" export --checkpoint "$ck" --format hf --output hf_out 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of an hf export into a directory with files"
assert_contains "$out" "hf_out already exists and is not empty"
# A path the system refuses (nothing can be created under /proc) is named with the system's reason.
rc=0
out=$("$ZEROTRAIN" export --checkpoint "$ck" --format hf --output /proc/zt_none/hf 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of an hf export under /proc"
assert_contains "$out" "zerotrain export: /proc/zt_none: No such file or directory"
assert_not_contains "$out" "internal error" "output of an hf export under /proc"
# The export is a directory like any other: mkdir's mode, not its temporary name's 0700.
assert_eq "$(stat -c %a hf_out)" "$(printf '%o' $((0777 & ~$(umask))))" "the mode of the hf export"
# A full disk (here a file size limit: the write fails with EFBIG) is named with the path.
rc=0
out=$( (ulimit -f 64 && trap '' XFSZ && exec "$ZEROTRAIN" export --checkpoint "$ck" --format hf --output hf_full) 2>&1) ||
  rc=$?
assert_eq "$rc" 1 "exit status of an hf export that cannot write"
assert_contains "$out" "model.safetensors: File too large"
assert_not_contains "$out" "internal error" "output of an hf export that cannot write"
[[ ! -e hf_full && -z $(find . -maxdepth 1 -name '.hf_full.tmp-*') ]] ||
  fail "an hf export that could not write left files: $(ls -la)"
# Ctrl-C or SIGTERM in the middle (here on opening the checkpoint's shard): the export stops at the
# next tensor with the shell's status for the signal and removes what it had written.
for format in safetensors hf; do
  for signal in 2 15; do
    rc=0
    out=$(LD_PRELOAD=$ZT_CRASH_ON_OPEN_LIB ZT_CRASH_ON_OPEN=master.f32 ZT_CRASH_ON_OPEN_SIGNAL=$signal "$ZEROTRAIN" \
      export --checkpoint "$ck" --format $format --output signalled 2>&1) || rc=$?
    assert_eq "$rc" $((128 + signal)) "exit status of a $format export stopped by signal $signal"
    assert_contains "$out" "stopped by SIG"
    [[ ! -e signalled && -z $(find . -maxdepth 1 -name '.signalled*') ]] ||
      fail "a $format export stopped by signal $signal left files: $(ls -la)"
  done
done
pass "export --format hf: whole or nothing; a failed, killed or stopped export does not block the next"

# (5) prepare-data with bad input over an existing dataset: the dataset stays as it was.
before=$(cat data/*.bin data/dataset.json | sha256sum)
printf 'a\0b\n' >bad.txt
rc=0
out=$("$ZEROTRAIN" prepare-data --input bad.txt --output data 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of prepare-data with a NUL byte in its input"
assert_contains "$out" "NUL byte"
assert_eq "$(cat data/*.bin data/dataset.json | sha256sum)" "$before" "the dataset after a failed prepare-data"
[[ -z $(find data -name '.prepare-data.*') ]] || fail "a failed prepare-data left its staging directory"
rc=0
out=$("$ZEROTRAIN" prepare-data --input missing.txt --output data 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of prepare-data with a missing input"
assert_eq "$(cat data/*.bin data/dataset.json | sha256sum)" "$before" "the dataset after a missing input"
"$ZEROTRAIN" prepare-data --input corpus.txt --input corpus.txt --output data >/dev/null 2>&1 || fail "a good prepare-data failed"
assert_not_contains "$(cat data/*.bin data/dataset.json | sha256sum)" "$before" "the dataset after a good prepare-data"
pass "prepare-data: bad inputs keep the existing dataset; good ones replace it"

# (6) Named pipes where zerotrain reads a small file: opening one would wait for a writer forever
# (and with it every rank, before the watchdog starts). Each is refused, naming the file.
mkdir hf_fifo && mkfifo hf_fifo/config.json
printf 'model:\n  init_from: hf_fifo\n' >fifo_init.yaml
rc=0
out=$(timeout -k 5 30 "$ZEROTRAIN" config --config fifo_init.yaml 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status with a named pipe as init_from's config.json"
assert_contains "$out" "cannot read hf_fifo/config.json: a named pipe, not a regular file"
mkdir -p fifo_ck && cp -r "$ck" fifo_ck/step_00000002 && cp -r "$ck" fifo_ck/step_00000009
rm fifo_ck/step_00000009/manifest.json && mkfifo fifo_ck/step_00000009/manifest.json
run_job 2 "$ZEROTRAIN" train --config config.yaml --set checkpoint.interval=2 --set checkpoint.dir=fifo_ck --resume auto
assert_eq "$rc" 1 "exit status of --resume auto over a checkpoint whose manifest is a named pipe"
assert_contains "$out" "fifo_ck/step_00000009/manifest.json is a named pipe, not a regular file"
rc=0
out=$(timeout -k 5 30 "$ZEROTRAIN" eval --checkpoint fifo_ck/step_00000009 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of eval of a checkpoint whose manifest is a named pipe"
assert_contains "$out" "cannot read checkpoint manifest fifo_ck/step_00000009/manifest.json: a named pipe, not a regular file"
cp -r data data_fifo && rm data_fifo/dataset.json
run_job 1 "$ZEROTRAIN" train --config config.yaml --set train.steps=2 --set checkpoint.interval=2 \
  --set "data.train_files=data_fifo/train_*.bin" --set checkpoint.dir=fifo_run_ck --set logging.run_dir=fifo_run
assert_eq "$rc" 0 "exit status of the run for sample; output: $out"
mkfifo data_fifo/dataset.json
rc=0
out=$(timeout -k 5 30 "$ZEROTRAIN" sample --checkpoint fifo_run_ck/step_00000002 --prompt "line" 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of sample with a named pipe as dataset.json"
assert_contains "$out" "cannot read data_fifo/dataset.json: a named pipe, not a regular file"
pass "named pipes as config.json, manifest.json and dataset.json: refused, named, no hang"
