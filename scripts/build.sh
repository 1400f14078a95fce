#!/usr/bin/env bash
# Installs what zerotrain needs and builds it into build/ (CUDA backend when nvcc is found).
# Usage: scripts/build.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# GPU builds: the cuDNN frontend's headers, for attention on cuDNN (optional; see the script).
if command -v nvcc >/dev/null 2>&1 || compgen -G '/usr/local/cuda*/bin/nvcc' >/dev/null; then
  bash scripts/fetch-cudnn-frontend.sh ||
    echo "build: the cuDNN frontend's headers were not fetched; GPU attention will run the flash kernels" >&2
fi
jobs=$(( $(nproc) < 2 ? 1 : 2 ))
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build -j "${ZT_BUILD_JOBS:-$jobs}"
