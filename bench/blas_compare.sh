#!/usr/bin/env bash
# Which BLAS serves zerotrain's CPU path best on this machine: Debian's OpenBLAS (what zerotrain
# links), Debian's BLIS, the newer OpenBLAS of the scipy-openblas32 wheel and Intel MKL's wheel
# from PyPI, timed side by side in one process on the products of a transformer block (see
# bench/blas_compare.cpp), single-threaded, at the `small` and `wide` models' shapes.
#
#   bash bench/blas_compare.sh [ROUNDS]
#
# Installs libblis4-pthread with apt-get when it is missing and downloads the two wheels into
# .bench-cache/ (PyPI); writes bench/results/blas_compare.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-15}
cache=.bench-cache/blas
mkdir -p "$cache"

openblas=/usr/lib/x86_64-linux-gnu/libopenblas.so.0
blis=/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4
if [[ ! -e $blis ]]; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libblis4-pthread
fi
for wheel in scipy-openblas32 mkl; do
  if ! compgen -G "$cache/${wheel//-/_}-*.whl" > /dev/null; then
    python3 -m pip download -q --no-deps --dest "$cache" "$wheel"
  fi
done
for whl in "$cache"/*.whl; do
  dir=${whl%.whl}
  [[ -d $dir ]] || python3 -m zipfile -e "$whl" "$dir"
done
scipy_openblas=$(find "$cache" -name 'libscipy_openblas.so' -print -quit)
mkl_rt=$(find "$cache" -name 'libmkl_rt.so.*' -print -quit)

g++ -O2 -std=c++20 -Wall -Wextra -o "$cache/blas_compare" bench/blas_compare.cpp -ldl
wheels=$(cd "$cache" && ls -- *.whl | sed 's/-py.*//' | tr '\n' ' ')
versions="Debian OpenBLAS $(dpkg-query -W -f '${Version}' libopenblas0-pthread), Debian BLIS \
$(dpkg-query -W -f '${Version}' libblis4-pthread), PyPI wheels: $wheels"
run() {
  env OPENBLAS_NUM_THREADS=1 BLIS_NUM_THREADS=1 MKL_NUM_THREADS=1 OMP_NUM_THREADS=1 \
    MKL_THREADING_LAYER=SEQUENTIAL LD_LIBRARY_PATH="$(dirname "$mkl_rt")" \
    "$cache/blas_compare" "$1" "$2" "$rounds" "$openblas" "$scipy_openblas=scipy_" "$blis" "$mkl_rt"
}
{
  echo "# sgemm by library on a transformer block's products"
  echo
  echo "- commit: $(git rev-parse --short=12 HEAD) (bench/blas_compare.cpp as built there)"
  echo "- machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), $(uname -sr)"
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- libraries: $versions"
  echo "- one thread each; every round times each library in turn on the same buffers (bench/blas_compare.cpp);"
  echo "  fwd = C = A B^T (a Linear's forward), dinp = A B (input gradient), dweight = C += A^T B (weight gradient)"
  echo
  echo '```'
  run 512 256    # small: 4 sequences x 128 tokens, width 256
  echo
  run 1024 512   # wide: 4 sequences x 256 tokens, width 512
  echo '```'
} | tee bench/results/blas_compare.md
