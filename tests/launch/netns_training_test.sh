#!/usr/bin/env bash
# A real multi-node training job: 2 simulated hosts (network namespaces joined by a rate-limited
# link) x 2 ranks each, started through launch/multinode.sh with a hostfile naming those hosts,
# over TCP only. It must train and checkpoint exactly like the same 4-rank job on one host: the
# same loss at every step and the same checkpoints, at stage 2 and at stage 3. On the 2 hosts the
# all-gathers run in two levels (comm.two_level_all_gather), on one host in one flat ring.
# Exit 77 (CTest skip) without namespaces.
# usage: netns_training_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
BIN=$1 REPO=$2
H="$REPO/bench/netns/netns-hosts.sh"

require_netns "$H"

# A small slice of the default dataset, prepared here so the test needs nothing else.
"$BIN" prepare-data --input /usr/share/games/fortunes/riddles --output "$TMP/data" --val-fraction 0.2 >/dev/null
job=(train --config "$REPO/configs/default.yaml"
     --set "data.train_files=$TMP/data/train_*.bin" --set "data.val_files=$TMP/data/val_*.bin"
     --set train.steps=8 --set train.eval_interval=0 --set train.train_micro_batch_size_per_gpu=2
     --set checkpoint.interval=4 --set zero_optimization.stage=2 --set comm.timeout_s=60)

rc=0
out=$(cd "$TMP" && ZT_BIN="$BIN" "$H" with-hosts 2 1gbit --slots 2 -- \
  "$REPO/launch/multinode.sh" --hostfile @hostfile --ppn 2 -- "${job[@]}" --set "logging.run_dir=$TMP/two-hosts" 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "2 hosts x 2 ranks exited $rc:"$'\n'"$out"
assert_contains "$out" "on 4 rank(s)"
assert_contains "$out" "all-gathers in two levels: across 2 hosts, then within each host's 2 ranks"

rc=0
out=$(cd "$TMP" && ZT_BIN="$BIN" "$REPO/launch/zt-run" -n 4 -- "${job[@]}" --set "logging.run_dir=$TMP/one-host" 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "1 host x 4 ranks exited $rc:"$'\n'"$out"

losses() { python3 -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "loss" in r: print(r["step"], repr(r["loss"]))' "$1/metrics.jsonl"; }
two=$(losses "$TMP/two-hosts") one=$(losses "$TMP/one-host")
[[ $(wc -l <<<"$two") -eq 8 ]] || fail "expected 8 steps of metrics from the 2-host run, got:"$'\n'"$two"
assert_eq "$two" "$one" "losses of the 2-host run vs the 1-host run"
pass "2 hosts x 2 ranks trained exactly like 1 host x 4 ranks: $(tr '\n' ' ' <<<"$two")"

for step in 00000004 00000008; do
  for run in two-hosts one-host; do
    [[ -f "$TMP/$run/checkpoints/step_$step/COMPLETE" ]] || fail "$run has no complete checkpoint step_$step"
  done
  # Same shards, byte for byte (the manifests differ only in paths and timestamps, if at all).
  for shard in "$TMP/one-host/checkpoints/step_$step"/rank_*; do
    cmp -s "$shard" "$TMP/two-hosts/checkpoints/step_$step/$(basename "$shard")" ||
      fail "checkpoint shard $(basename "$shard") of step $step differs between the runs"
  done
done
pass "both runs wrote identical checkpoints at steps 4 and 8"

# Stage 3 gathers every block in forward and backward (the first block in the optimizer's pieces),
# in two levels across the hosts: again the same losses as one host, where the ring is flat.
stage3=("${job[@]}" --set zero_optimization.stage=3 --set checkpoint.interval=0 --set zero_optimization.reduce_bucket_size=4000)
rc=0
out=$(cd "$TMP" && ZT_BIN="$BIN" "$H" with-hosts 2 1gbit --slots 2 -- \
  "$REPO/launch/multinode.sh" --hostfile @hostfile --ppn 2 -- "${stage3[@]}" --set "logging.run_dir=$TMP/two-hosts-3" 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "stage 3 on 2 hosts x 2 ranks exited $rc:"$'\n'"$out"
assert_contains "$out" "all-gathers in two levels"
rc=0
out=$(cd "$TMP" && ZT_BIN="$BIN" "$REPO/launch/zt-run" -n 4 -- "${stage3[@]}" --set "logging.run_dir=$TMP/one-host-3" 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "stage 3 on 1 host x 4 ranks exited $rc:"$'\n'"$out"
two=$(losses "$TMP/two-hosts-3") one=$(losses "$TMP/one-host-3")
[[ $(wc -l <<<"$two") -eq 8 ]] || fail "expected 8 steps of metrics from the stage-3 2-host run, got:"$'\n'"$two"
assert_eq "$two" "$one" "stage-3 losses of the 2-host run vs the 1-host run"
pass "stage 3: 2 hosts x 2 ranks trained exactly like 1 host x 4 ranks: $(tr '\n' ' ' <<<"$two")"
