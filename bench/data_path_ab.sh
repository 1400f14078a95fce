#!/usr/bin/env bash
# Tokens/s of the default config (configs/default.yaml: tiny GPT-2 on data/fortunes, 2 CPU ranks)
# with two zerotrain binaries, alternating A, B per round so a shared machine's drift hits both:
# the cost of a change on the data path (e.g. reading token windows with pread and checking them).
#   bench/data_path_ab.sh BIN_A BIN_B [ROUNDS] [STEPS]    (needs data/fortunes: scripts/prepare-default-data.sh)
# Prints one line per run and the median tokens/s of each binary (steps 11.. of each run, from
# metrics.jsonl), and writes the table to bench/results/data_path_ab.md.
set -euo pipefail
cd "$(dirname "$0")/.."
a=$(realpath "$1") b=$(realpath "$2") rounds=${3:-5} steps=${4:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A runs=([A]="" [B]="")
mean_tps() {  # metrics.jsonl -> mean tokens_per_s of steps > 10
  python3 -c 'import json,sys; v=[r["tokens_per_s"] for r in map(json.loads, open(sys.argv[1])) if "tokens_per_s" in r and r["step"] > 10]; print(f"{sum(v)/len(v):.0f}")' "$1"
}
for round in $(seq 1 "$rounds"); do
  for which in A B; do
    bin=$a; [[ $which == B ]] && bin=$b
    rm -rf "$work/run"
    load=$(cut -d' ' -f1 /proc/loadavg)
    mpirun --oversubscribe --allow-run-as-root --bind-to none -np 2 "$bin" train --config configs/default.yaml \
      --set train.steps="$steps" --set train.eval_interval=0 --set checkpoint.interval=0 \
      --set logging.run_dir="$work/run" >/dev/null 2>&1
    tps=$(mean_tps "$work/run/metrics.jsonl")
    runs[$which]+="$tps "
    echo "round $round $which: $tps tokens/s (load average $load before)"
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ma=$(median <<<"${runs[A]}") mb=$(median <<<"${runs[B]}")
{
  echo "# Data path A/B: tokens/s of configs/default.yaml (2 CPU ranks, $steps steps, steps 11.. averaged)"
  echo
  echo "$(date -u +%F), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores shared with other work;"
  echo "A = $a, B = $b, $rounds rounds alternating A, B."
  echo
  echo "| binary | tokens/s per round | median |"
  echo "| --- | --- | --- |"
  echo "| A | ${runs[A]}| $ma |"
  echo "| B | ${runs[B]}| $mb |"
  echo
  echo "B/A = $(python3 -c "print(f'{$mb/$ma:.3f}')")"
} | tee bench/results/data_path_ab.md
