#!/usr/bin/env bash
# The main job on a fresh machine: installs what zerotrain needs, builds it, prepares the default
# dataset (English text from Debian's fortunes) and trains the tiny GPT-2 of configs/default.yaml
# on two CPU ranks with ZeRO stage 2 and overlapped gradient communication.
# Extra arguments go to `zerotrain train`, e.g. scripts/demo.sh --set train.steps=50
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ZEROTRAIN=build/zerotrain bash scripts/prepare-default-data.sh
ranks=${ZT_RANKS:-2}
# A run directory of its own each time: a second demo would otherwise meet the first one's
# checkpoints, which a new run refuses to overwrite (docs/checkpoints.md).
run_dir=runs/demo-$(date +%Y%m%d-%H%M%S)
echo "demo: training into $run_dir"
exec launch/zt-run -n "$ranks" -- train --config configs/default.yaml --set logging.run_dir="$run_dir" "$@"
