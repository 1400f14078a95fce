#!/usr/bin/env bash
# Runs a Python interop test in the repository's .venv (scripts/setup-python.sh makes it;
# scripts/test.sh always does). Without the venv the test is skipped (exit 77), saying so.
# Usage: run_python.sh VENV_PYTHON SCRIPT ARGS...
set -euo pipefail
python=$1
shift
if [ ! -x "$python" ]; then
  echo "SKIP: $python is missing; run scripts/setup-python.sh to install torch, transformers, safetensors and deepspeed"
  exit 77
fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none
exec "$python" "$@"
