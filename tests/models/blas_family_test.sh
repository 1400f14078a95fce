#!/usr/bin/env bash
# The zerotrain binary runs OpenBLAS's fast kernel family for this CPU however it is started (a
# plain process, mpirun) without OPENBLAS_CORETYPE in the environment, and keeps the user's choice
# when it is set. The family must match what the CPU flags allow, decided here independently.
# usage: blas_family_test.sh ZEROTRAIN MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
bin=$1 mpiexec=$2
shift 2
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { for f in "$@"; do [[ "$flags" == *" $f "* ]] || return 1; done; }
if has avx512f avx512bw avx512vl avx512dq; then fast="SkylakeX Cooperlake SapphireRapids"
elif has avx2 fma; then fast="Haswell Zen SkylakeX Cooperlake SapphireRapids"
else fast=""; fi

family() { sed -n 's/^kernels: \([A-Za-z0-9]*\).*/\1/p' <<<"$1"; }
check() {  # check WHAT OUTPUT
  local got; got=$(family "$2")
  [[ -n "$got" ]] || { echo "FAIL $1: no 'kernels:' line in:"; echo "$2"; exit 1; }
  if [[ -n "$fast" && " $fast " != *" $got "* ]]; then
    echo "FAIL $1: OpenBLAS runs its $got kernels; this CPU should get one of: $fast"; exit 1
  fi
  echo "ok $1: $got"
}
args=(bench-gemm --shapes 64x64x64 --seconds 0 --threads 1)
check "plain process" "$(env -u OPENBLAS_CORETYPE "$bin" "${args[@]}")"
check "mpirun -np 1" "$(env -u OPENBLAS_CORETYPE "$mpiexec" "$@" -np 1 "$bin" "${args[@]}")"
out=$(OPENBLAS_CORETYPE=Nehalem "$bin" "${args[@]}")
[[ $(family "$out") == Nehalem ]] || { echo "FAIL: OPENBLAS_CORETYPE=Nehalem was not kept:"; echo "$out"; exit 1; }
echo "ok the user's OPENBLAS_CORETYPE is kept"

# A malformed shape is one clear usage error (exit status 2) naming the option and the value.
rc=0; out=$("$bin" bench-gemm --shapes 512x64 2>&1) || rc=$?
[[ $rc -eq 2 && "$out" == *"--shapes: '512x64'"* ]] || { echo "FAIL: bad --shapes gave rc $rc: $out"; exit 1; }
echo "ok a malformed --shapes is a usage error"
