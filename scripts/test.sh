#!/usr/bin/env bash
# Sets up a fresh machine, builds zerotrain, installs the Python packages of the interop tests
# into .venv/ and runs the whole test suite (unit tests and the multi-rank tests under mpirun).
# Exit code 0 only when every test passed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/setup-python.sh
ctest --test-dir build --output-on-failure -j 2 --timeout 600
