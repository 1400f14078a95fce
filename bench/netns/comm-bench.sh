#!/usr/bin/env bash
# comm-bench.sh — record `zerotrain bench-comm` across simulated hosts (netns-hosts.sh) into a
# results file, with everything needed to reproduce it in the header.
#
#   bench/netns/comm-bench.sh [--hosts N] [--ppn K] [--rate R] [--out FILE] [-- bench-comm args]
#
# Each configuration gets a fresh set of hosts (so tc counters start from zero) and the tc
# statistics of host 0's NIC are appended, showing the bytes that really went through the limiter.
set -euo pipefail

HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
hosts=2 ppn=1 rate=200mbit out="" extra_env=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --hosts) hosts="$2"; shift 2 ;;
    --ppn) ppn="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --env) extra_env="$2"; shift 2 ;;   # e.g. OMPI_MCA_btl_tcp_links=2
    -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
    --) shift; break ;;
    *) echo "comm-bench.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
bench_args=("$@")
[[ ${#bench_args[@]} -gt 0 ]] || bench_args=(--min-bytes 64K --max-bytes 16M --iters 5)
bin="${ZT_BIN:-$REPO/build/zerotrain}"
[[ -x "$bin" ]] || { echo "comm-bench.sh: zerotrain binary '$bin' not found (set ZT_BIN)" >&2; exit 1; }

run() {
  local cmd=("$HERE/netns-hosts.sh" with-hosts "$hosts" "$rate" -- \
    "$REPO/launch/zt-run" --hostfile @hostfile --ppn "$ppn" -- bench-comm "${bench_args[@]}")
  # Same run, followed by the tc counters of host 0 while the hosts still exist.
  local with_stats=("${cmd[@]:0:5}" bash -c \
    '"$@"; rc=$?; echo "# tc statistics after the run (host 0):"; "$0" stats "$ZT_NETNS_ID" | head -8 | sed "s/^/#   /"; exit $rc' \
    "$HERE/netns-hosts.sh" "${cmd[@]:5}")
  echo "# command: ${extra_env:+$extra_env }ZT_BIN=$bin ${cmd[*]}"
  echo "# commit: $(git -C "$REPO" rev-parse --short=12 HEAD)$(git -C "$REPO" diff --quiet HEAD -- comm runtime 2>/dev/null || echo ' (comm/ or runtime/ modified in the working tree)')"
  echo "# machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), Linux $(uname -r), $(mpirun --version 2>/dev/null | head -1)"
  echo "# network: $hosts hosts (network namespaces) x $ppn rank(s), veth + bridge, tbf rate $rate each way per host (burst 256kb, latency 50ms), no added delay (netem unavailable)"
  echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg); date: $(date -u +%Y-%m-%dT%H:%MZ)"
  local start=$SECONDS
  # shellcheck disable=SC2086
  env $extra_env ZT_BIN="$bin" ZT_NETNS_QUIET=1 "${with_stats[@]}" 2>&1
  echo "# wall time: $((SECONDS - start)) s; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
}

if [[ -n "$out" ]]; then run | tee "$out"; else run; fi
