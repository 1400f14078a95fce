#!/usr/bin/env bash
# The start-up cost of the data fingerprint (runtime/train/dataset_fingerprint.cpp: CRC32 of the
# whole content of every data file, on every rank): the time of the ranks' agreement check, which
# rank 0 logs at debug level ("checked in N ms"), on the default dataset and on a 1 GiB shard,
# each twice (the first read may come from disk, the second from the page cache).
# usage: bench/fingerprint_startup.sh [ZEROTRAIN] (default build/zerotrain); results go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
ZEROTRAIN=$(realpath "${1:-build/zerotrain}")
[[ -f data/fortunes/train_000000.bin ]] || ZEROTRAIN=$ZEROTRAIN bash scripts/prepare-default-data.sh >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe --allow-run-as-root --bind-to none --mca btl self,vader -np 2)

check_ms() {  # extra zerotrain args...: prints the agreement check's ms
  OMPI_MCA_btl_vader_single_copy_mechanism=none "${mpi[@]}" "$ZEROTRAIN" train --config configs/default.yaml \
    --set logging.level=debug --set logging.run_dir="$work/run" --set train.steps=1 --set train.eval_interval=0 "$@" 2>&1 |
    grep -m1 -oE "checked in [0-9.]+ ms" | grep -oE "[0-9.]+"
}

bytes=$(cat data/fortunes/train_*.bin | wc -c)
echo "default dataset (data/fortunes/train_*.bin, $bytes bytes): $(check_ms) ms, again $(check_ms) ms"

# 1 GiB of tokens (2^29 tokens of 0) in llm.c's shard format, and the tiny config reading it.
mkdir -p "$work/big"
{ printf '\x88\xd8\x34\x01\x01\x00\x00\x00\x00\x00\x00\x20'; head -c 1012 /dev/zero; head -c $((1 << 30)) /dev/zero; } \
  >"$work/big/train_000000.bin"
echo "1 GiB shard: $(check_ms --set data.train_files="$work/big/train_*.bin") ms, again" \
     "$(check_ms --set data.train_files="$work/big/train_*.bin") ms"
grep -m1 'model name' /proc/cpuinfo
