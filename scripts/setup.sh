#!/usr/bin/env bash
# Installs every Debian package zerotrain needs to build and run; with --tests also what only the
# test suite uses (Slurm and munge: the Slurm tests start their own cluster in network namespaces);
# with --bench what only the benchmarks use (stress-ng: bench/perf_peer.py's noisy neighbour).
# Idempotent: packages already present are left alone, so a second run is quick.
set -euo pipefail

packages=(
  build-essential cmake git pkg-config
  openmpi-bin libopenmpi-dev
  libopenblas-dev libdnnl-dev
  ocl-icd-opencl-dev  # oneDNN's CMake package asks for OpenCL (only Recommended by libdnnl-dev)
  libyaml-cpp-dev libfmt-dev libboost-program-options-dev
  libgtest-dev googletest nlohmann-json3-dev
  zlib1g-dev
  fortunes-min
  gnuplot-nox
  iproute2
  python3-venv
)
for option in "$@"; do
  case "$option" in
    --tests) packages+=(slurmctld slurmd slurm-client munge) ;;
    --bench) packages+=(stress-ng) ;;
    *) echo "setup: unknown option '$option' (--tests, --bench)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
