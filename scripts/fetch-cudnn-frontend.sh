#!/usr/bin/env bash
# Fetches the headers of NVIDIA's cuDNN frontend (header-only C++; the graph API through which the
# GPU attention runs cuDNN's fused kernels) from PyPI's nvidia-cudnn-frontend wheel into
# .deps/cudnn-frontend/include, where CMake looks for them. Pinned; idempotent (a second run with
# the same version does nothing). zerotrain does not link cuDNN: it loads libcudnn.so.9 when a GPU
# run starts, and without it (or without these headers at build time) the GPU attention runs
# zerotrain's own flash kernels. Exits 0 with a note when PyPI cannot be reached.
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.32.0
dest=.deps/cudnn-frontend
stamp=$dest/VERSION

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ] && [ -f "$dest/include/cudnn_frontend.h" ]; then
  echo "fetch-cudnn-frontend: $dest is at $version"
  exit 0
fi

pip=(python3 -m pip)
if ! python3 -m pip --version >/dev/null 2>&1; then
  # Debian's python3 has no pip of its own; python3-venv (scripts/setup.sh) brings one into a venv.
  [ -x .deps/pip-venv/bin/python ] || python3 -m venv .deps/pip-venv
  pip=(.deps/pip-venv/bin/python -m pip)
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The headers are the same in every wheel of a version; ask for one wheel whatever this machine's
# Python is.
if ! "${pip[@]}" download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.11 --platform manylinux_2_28_x86_64 -d "$tmp" "nvidia-cudnn-frontend==$version"; then
  echo "fetch-cudnn-frontend: could not download nvidia-cudnn-frontend $version from PyPI;" \
       "GPU builds will run attention on zerotrain's own kernels" >&2
  exit 0
fi
python3 - "$tmp" "$tmp/unpacked" <<'PY'
import glob, sys, zipfile
wheel, = glob.glob(sys.argv[1] + "/*.whl")
with zipfile.ZipFile(wheel) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("include/")])
PY
rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/unpacked/include" "$dest/include"
echo "$version" > "$stamp"
echo "fetch-cudnn-frontend: $version headers in $dest/include"
