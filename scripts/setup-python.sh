#!/usr/bin/env bash
# Creates .venv/ in the repository with the pinned Python packages the interop tests use
# (tools/requirements-parity.txt: torch, transformers, safetensors, numpy, deepspeed, all from PyPI).
# Idempotent: a .venv whose recorded requirements match the file is left alone, so a second run
# takes a second. python3-venv comes from scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=tools/requirements-parity.txt
venv=.venv
stamp=$venv/.requirements-parity.txt

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && cmp -s "$requirements" "$stamp"; then
  echo "setup-python: $venv is up to date with $requirements"
  exit 0
fi

start=$(date +%s)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
echo "setup-python: installed $requirements into $venv in $(( $(date +%s) - start )) s"
