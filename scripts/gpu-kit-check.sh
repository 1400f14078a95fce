#!/usr/bin/env bash
# After the test suite (scripts/test.sh): packs the GPU kit from the suite's own CUDA build, so
# that nothing is compiled twice, and runs the kit's self-containment test on it
# (tests/gpukit/self_contained_test.sh). Skipped, with the reason, when build/ has no CUDA backend.
# docs/gpu.md has the measured times behind packing from build/ rather than building the kit anew.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! grep -q '^CMAKE_CUDA_COMPILER:' build/CMakeCache.txt 2>/dev/null; then
  echo "gpu-kit-check: skipped: build/ has no CUDA backend (no nvcc when it was configured)"
  exit 0
fi
start=$(date +%s)
bash tools/gpu-kit/build.sh --build-dir build gpu-kit-out
ZT_GPU_KIT_DIR=$PWD/gpu-kit-out ctest --test-dir build -R '^gpukit\.self_contained$' --output-on-failure --no-tests=error
echo "gpu-kit-check: packed and checked in $(( $(date +%s) - start )) s"
