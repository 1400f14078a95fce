#!/usr/bin/env bash
# The end-to-end training run the checks in train_run_test.cpp read: the default dataset prepared
# into OUT/data, then configs/default.yaml on 2 ranks for 60 steps (validation every 20, steps 5-6
# traced) into OUT/run, then its curves plotted when gnuplot is installed.
#
# Usage: run_end_to_end.sh OUT ZEROTRAIN MPIEXEC [MPIEXEC_FLAGS...]
# Exit status 77 (CTest: skipped) when the fortunes-min texts are not installed.
set -euo pipefail
out=$1
zerotrain=$2
mpiexec=$3
shift 3
source_dir=$(cd "$(dirname "$0")/../../.." && pwd)

fortunes_dir=${ZT_FORTUNES_DIR:-/usr/share/games/fortunes}
if [ ! -f "$fortunes_dir/fortunes" ]; then
  echo "skipped: $fortunes_dir/fortunes is missing (install fortunes-min: scripts/setup.sh)"
  exit 77
fi

rm -rf "$out"
mkdir -p "$out"
ZEROTRAIN=$zerotrain ZT_DATA_DIR=$out/data bash "$source_dir/scripts/prepare-default-data.sh"

export OMPI_MCA_btl_vader_single_copy_mechanism=none
"$mpiexec" "$@" -np 2 "$zerotrain" train --config "$source_dir/configs/default.yaml" \
  --set train.steps=60 --set train.eval_interval=20 --set train.eval_steps=5 \
  --set "data.train_files=$out/data/train_*.bin" --set "data.val_files=$out/data/val_*.bin" \
  --set "logging.run_dir=$out/run" --set checkpoint.interval=0 \
  --trace 5:6

if command -v gnuplot >/dev/null; then
  "$zerotrain" plot "$out/run"
else
  echo "gnuplot is not installed: no curves (the plot check will be skipped)"
fi
