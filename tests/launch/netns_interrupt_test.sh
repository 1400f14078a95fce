#!/usr/bin/env bash
# netns-hosts.sh with-hosts tears everything down when interrupted mid-run (SIGINT, as Ctrl-C):
# the running mpirun/ranks in the namespaces are ended, namespaces and state removed, exit 130.
# Exit 77 (CTest skip) where namespaces cannot be made.
# usage: netns_interrupt_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
BIN=$1 REPO=$2
H="$REPO/bench/netns/netns-hosts.sh"

require_netns "$H"

# A long bench (large sizes at 100 Mbit/s) that we interrupt once both ranks run.
set -m   # job control: a background job of a script would otherwise start with SIGINT ignored
ZT_BIN="$BIN" "$H" with-hosts 2 100mbit -- bash -c 'echo "$ZT_NETNS_ID" >"$0"; exec "$@"' "$TMP/id" \
  "$REPO/launch/zt-run" --hostfile @hostfile -- bench-comm --ops all_reduce --min-bytes 64M --max-bytes 64M --iters 20 \
  >"$TMP/out" 2>&1 &
pid=$!
set +m
ranks=""
for _ in $(seq 300); do
  if [[ -s "$TMP/id" ]]; then
    id=$(cat "$TMP/id")
    ranks=$(for ns in "$id-h0" "$id-h1"; do ip netns pids "$ns" 2>/dev/null; done | while read -r p; do
      [[ "$(readlink "/proc/$p/exe" 2>/dev/null)" == "$(readlink -f "$BIN")" ]] && echo "$p"; done | tr '\n' ' ' || true)
    [[ $(wc -w <<<"$ranks") -ge 2 ]] && break
  fi
  sleep 0.1
done
[[ $(wc -w <<<"$ranks") -ge 2 ]] || { kill -TERM "$pid" 2>/dev/null; fail "the two ranks did not start; output:"$'\n'"$(cat "$TMP/out")"; }
all_pids=$(for ns in "$id-h0" "$id-h1" "$id-sw"; do ip netns pids "$ns" 2>/dev/null; done | tr '\n' ' ')
start=$SECONDS
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
assert_eq "$rc" 130 "exit status of with-hosts after SIGINT"
((SECONDS - start < 30)) || fail "teardown took $((SECONDS - start)) s"
assert_contains "$(cat "$TMP/out")" "interrupted (INT), tearing down"
pass "interrupted with ranks $ranks running; with-hosts exited 130 after $((SECONDS - start)) s"

left=$(ip netns list | grep -- "$id" || true)
[[ -z "$left" ]] || fail "namespaces left behind: $left"
for p in $all_pids; do
  state=$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
  [[ -z "$state" || "$state" == Z ]] || fail "process $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)) from the namespaces still runs (state $state)"
done
[[ ! -e "${TMPDIR:-/tmp}/zt-netns.$id" ]] || fail "state dir left behind"
compgen -G "/etc/netns/$id-*" >/dev/null && fail "/etc/netns/$id-* left behind"
pass "namespaces, processes ($all_pids) and state of $id are gone"
