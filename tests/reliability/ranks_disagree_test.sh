#!/usr/bin/env bash
# Ranks that disagree stop at start-up, all of them, with a message naming the difference:
# (1) rank 1 gets another --set, (2) rank 1 reads a different copy of the data, (2b) or of the
# model.init_from weights, (3) a rank-local
# key (logging.level) may differ. usage: ranks_disagree_test.sh ZEROTRAIN REPO MPIEXEC [FLAGS...]
source "$(dirname "$0")/lib.sh"
make_job

# (1) A wrapper that adds --set train.steps=7 on rank 1 only, as a mistyped per-node script would.
cat >steps_differ.sh <<SH
#!/usr/bin/env bash
if [[ \$OMPI_COMM_WORLD_RANK == 1 ]]; then exec "$ZEROTRAIN" "\$@" --set train.steps=7; fi
exec "$ZEROTRAIN" "\$@"
SH
chmod +x steps_differ.sh
run_job 2 ./steps_differ.sh train --config config.yaml
assert_eq "$rc" 1 "exit status of ranks with different configs"
assert_contains "$out" "rank 1's config differs from rank 0's at train.steps: 20 (rank 0) vs 7 (rank 1)"
assert_contains "$out" "[zt rank 1 error] stopping: the ranks disagree (rank 0 lists the differences)"
assert_not_contains "$out" "step 1/" "output (no rank may start training)"
assert_at_most "$ms" 30000 "ms to detect different configs"
pass "different --set on rank 1: exit $rc after $ms ms"
echo "timing: config_differs ${ms}ms"

# (2) Each rank runs in its own directory with its own copy of data/; rank 1's has one byte changed
# in the middle of the training shard (same name, same size: only the content hash can tell).
for r in 0 1; do mkdir "rank$r" && cp -r data config.yaml "rank$r/"; done
printf '\x41' | dd of=rank1/data/train_000000.bin bs=1 seek=2000 conv=notrunc status=none
cat >data_differs.sh <<SH
#!/usr/bin/env bash
cd "$TMP/rank\$OMPI_COMM_WORLD_RANK" && exec "$ZEROTRAIN" "\$@"
SH
chmod +x data_differs.sh
run_job 2 ./data_differs.sh train --config config.yaml
assert_eq "$rc" 1 "exit status of ranks with different data"
assert_contains "$out" "rank 1 reads data/train_000000.bin with a different content: crc32 of the whole file"
assert_at_most "$ms" 30000 "ms to detect different data"
pass "different data on rank 1: exit $rc after $ms ms"
echo "timing: data_differs ${ms}ms"

# The same for one byte in a middle MiB of a 6 MiB shard (3 Mi tokens of 0): the whole content is
# compared, not only the first and last MiB.
for r in 0 1; do
  mkdir "rank$r/big"
  { printf '\x88\xd8\x34\x01\x01\x00\x00\x00\x00\x00\x30\x00'; head -c 1012 /dev/zero; head -c $((6 << 20)) /dev/zero; } \
    >"rank$r/big/train_000000.bin"
done
printf '\x41' | dd of=rank1/big/train_000000.bin bs=1 seek=$(((3 << 20) + 1000)) conv=notrunc status=none
run_job 2 ./data_differs.sh train --config config.yaml --set data.train_files=big/train_*.bin
assert_eq "$rc" 1 "exit status of ranks whose data differ in a middle MiB"
assert_contains "$out" "rank 1 reads big/train_000000.bin with a different content: crc32 of the whole file"
pass "one byte changed in the 4th of 6 MiB on rank 1: exit $rc after $ms ms"
echo "timing: data_differs_middle_mib ${ms}ms"

# A missing file on rank 1 only (a node without the dataset) is named too.
rm rank1/data/val_000000.bin
run_job 2 ./data_differs.sh train --config config.yaml --set train.eval_interval=5
assert_eq "$rc" 1 "exit status with a file missing on rank 1"
assert_contains "$out" "rank 1 cannot read its data"
pass "validation file missing on rank 1: exit $rc after $ms ms"

# (2b) model.init_from read from node-local copies: rank 1's Hugging Face weights differ in one
# byte of a tensor. At stage 0 each rank would otherwise train its own model and log their mean.
run_job 1 "$ZEROTRAIN" train --config config.yaml --set train.steps=2 --set checkpoint.interval=2 \
  --set logging.run_dir=hf_run
assert_eq "$rc" 0 "exit status of the run the weights come from; output: $out"
"$ZEROTRAIN" export --checkpoint "$(ls -d hf_run/checkpoints/step_* | head -1)" --format hf --output hf >/dev/null ||
  fail "the hf export failed"
for r in 0 1; do mkdir "init$r" && cp -r data config.yaml hf "init$r/"; done
weights_bytes=$(stat -c %s init1/hf/model.safetensors)
printf '\x41' | dd of=init1/hf/model.safetensors bs=1 seek=$((weights_bytes - 100)) conv=notrunc status=none
cat >init_differs.sh <<SH
#!/usr/bin/env bash
cd "$TMP/init\$OMPI_COMM_WORLD_RANK" && exec "$ZEROTRAIN" "\$@"
SH
chmod +x init_differs.sh
run_job 2 ./init_differs.sh train --config config.yaml --set model.init_from=hf --set zero_optimization.stage=0
assert_eq "$rc" 1 "exit status of ranks reading different model.init_from weights"
assert_contains "$out" "rank 1 reads hf/model.safetensors with a different content: crc32 of the whole file"
assert_not_contains "$out" "step 1/" "output (no rank may start training)"
cp init0/hf/model.safetensors init1/hf/model.safetensors
run_job 2 ./init_differs.sh train --config config.yaml --set model.init_from=hf --set train.steps=2
assert_eq "$rc" 0 "exit status of ranks reading the same model.init_from weights; output: $out"
pass "different model.init_from weights on rank 1: exit 1, named; the same weights train"

# The same unreadable model.init_from on every rank (here: a directory without model.safetensors)
# is said once, by rank 0, in the words loading uses, and every rank stops cleanly: no MPI_Abort.
mkdir no_weights && cp hf/config.json no_weights/
run_job 2 "$ZEROTRAIN" train --config config.yaml --set model.init_from=no_weights
assert_eq "$rc" 1 "exit status of ranks that cannot read the same model.init_from"
assert_contains "$out" "model.init_from: no_weights has no model.safetensors (expected a directory written by save_pretrained"
assert_not_contains "$out" "MPI_ABORT"
assert_eq "$(grep -c 'has no model.safetensors' <<<"$out")" 1 "times the init_from error is printed"
pass "the same unreadable model.init_from on both ranks: said once, clean stop"

# (3) Keys that only change what one rank prints are allowed to differ; the job trains to the end.
cat >level_differs.sh <<SH
#!/usr/bin/env bash
if [[ \$OMPI_COMM_WORLD_RANK == 1 ]]; then exec "$ZEROTRAIN" "\$@" --set logging.level=warn; fi
exec "$ZEROTRAIN" "\$@"
SH
chmod +x level_differs.sh
run_job 2 ./level_differs.sh train --config config.yaml --set train.steps=3
assert_eq "$rc" 0 "exit status when only logging.level differs"
assert_contains "$out" "step 3/3"
pass "logging.level may differ between ranks"
