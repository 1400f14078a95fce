#!/usr/bin/env bash
# multinode.sh — zerotrain across nodes with mpirun and a hostfile.
#
# A thin front for `zt-run --hostfile`: multi-node runs need a hostfile, a fixed number of ranks per
# node (--map-by ppr:K:node, so rank r sits on node r / K and local rank r % K picks the GPU), and the
# data network chosen explicitly for MPI's TCP traffic (ZT_NET_IF) so that it does not wander onto a
# management NIC or docker0. All the flag logic lives in zt-run; this script only checks that the
# multi-node essentials are there and says so clearly when they are not.
set -euo pipefail

PROG=$(basename "$0")
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)

usage() {
  cat <<USAGE
usage: $PROG --hostfile FILE --ppn K [zt-run options] -- <zerotrain args>

  --hostfile FILE   nodes, one per line ('host slots=K'); see $HERE/hostfile.example
  --ppn K           ranks per node (one per GPU, or per CPU socket without GPUs)
  other options go to zt-run ($HERE/zt-run --help): -n, --net-if, --cores-per-node, --bind-to,
  --mpirun-arg, --dry-run

environment: ZT_NET_IF (strongly recommended: the data network's interface or CIDR), ZT_BIN,
ZT_RSH_AGENT (instead of ssh), ZT_MPI_BTL, ZT_MPI_PML, ZT_DRY_RUN=1.

example:
  ZT_NET_IF=10.10.0.0/16 $PROG --hostfile launch/hostfile.example --ppn 4 -- train --config configs/default.yaml
USAGE
}

hostfile="" ppn="" rest=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --hostfile) [[ $# -ge 2 ]] || { echo "$PROG: error: --hostfile needs a value" >&2; exit 2; }; hostfile="$2"; rest+=("$1" "$2"); shift 2 ;;
    --ppn) [[ $# -ge 2 ]] || { echo "$PROG: error: --ppn needs a value" >&2; exit 2; }; ppn="$2"; rest+=("$1" "$2"); shift 2 ;;
    --) break ;;
    *) rest+=("$1"); shift ;;
  esac
done
if [[ -z "$hostfile" || -z "$ppn" ]]; then
  usage >&2
  echo "$PROG: error: --hostfile and --ppn are required" >&2
  exit 2
fi
net_if_given=0
for arg in "${rest[@]}"; do [[ $arg == --net-if ]] && net_if_given=1; done
if [[ -z "${ZT_NET_IF:-}" && $net_if_given == 0 ]]; then
  echo "$PROG: note: ZT_NET_IF is not set; MPI will pick TCP interfaces itself (set it to the data network)" >&2
fi
exec "$HERE/zt-run" "${rest[@]}" "$@"
