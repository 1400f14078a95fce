#!/usr/bin/env bash
# Sets up a fresh machine, builds zerotrain, installs the Python packages of the interop tests
# into .venv/ and runs the whole test suite (unit tests and the multi-rank tests under mpirun),
# then two more builds in their own directories:
#   build-release:  the `zerotrain` target as users build it (-DCMAKE_BUILD_TYPE=Release), with
#                   warnings as errors, since -O3 warns about things -O2 does not;
#   build-sanitize: the loader fuzzer and the multi-rank engine tests under AddressSanitizer and
#                   UBSan (ZT_SANITIZE=address,undefined; CPU only, as the sanitizers do not see
#                   into GPU kernels).
# Exit code 0 only when every build and every test passed. ZT_CI_SKIP_EXTRA_BUILDS=1 skips the two.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
bash scripts/build.sh -DZT_WERROR=ON
bash scripts/setup-python.sh
ctest --test-dir build --output-on-failure -j 2 --timeout 600
[[ ${ZT_CI_SKIP_EXTRA_BUILDS:-0} == 1 ]] && exit 0

jobs=$(( $(nproc) < 2 ? 1 : 2 ))
seconds_since() { echo $(( $(date +%s) - $1 )); }

start=$(date +%s)
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DZT_WERROR=ON -DZT_BUILD_TESTS=OFF
cmake --build build-release -j "$jobs" --target zerotrain
build-release/zerotrain config --config configs/default.yaml >/dev/null
echo "test.sh: Release build of zerotrain took $(seconds_since "$start") s"

start=$(date +%s)
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZT_WERROR=ON -DZT_CUDA=OFF \
  -DZT_SANITIZE=address,undefined
cmake --build build-sanitize -j "$jobs" --target reliability_loader_fuzz zero_partition_test zero_engine_test
# OpenMPI keeps allocations until exit on purpose; leaks are checked by the fuzzer alone (its own
# ASAN_OPTIONS, set by its test), not in the MPI processes.
ASAN_OPTIONS=detect_leaks=0 ctest --test-dir build-sanitize --output-on-failure -j 2 --timeout 600 \
  -R '^(reliability_loader_fuzz|zero_partition_test\.|zero_engine_test\.)'
echo "test.sh: sanitizer build and tests took $(seconds_since "$start") s"
