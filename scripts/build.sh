#!/usr/bin/env bash
# Installs what zerotrain needs and builds it into build/ (CUDA backend when nvcc is found).
# Usage: scripts/build.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(( $(nproc) < 2 ? 1 : 2 ))
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build -j "${ZT_BUILD_JOBS:-$jobs}"
