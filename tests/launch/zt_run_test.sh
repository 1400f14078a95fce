#!/usr/bin/env bash
# zt-run: the mpirun command it builds (ZT_DRY_RUN=1) and a real 2-rank bench-comm through it.
# usage: zt_run_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
BIN=$1 REPO=$2
ZT_RUN="$REPO/launch/zt-run"
unset ZT_NET_IF ZT_RSH_AGENT ZT_MPI_BTL ZT_MPI_PML ZT_PPN ZT_CORES_PER_NODE ZT_DRY_RUN OMP_NUM_THREADS 2>/dev/null || true
export ZT_BIN="$BIN"
root_flag=""
[[ $(id -u) -eq 0 ]] && root_flag="--allow-run-as-root "

# Local, 2 ranks on 8 cores: each rank bound to 4 cores (room for its comm thread).
out=$(ZT_DRY_RUN=1 "$ZT_RUN" -n 2 --cores-per-node 8 -- bench-comm --max-bytes 1024)
assert_contains "$out" "mpirun ${root_flag}-np 2 --map-by slot:PE=4 --bind-to core -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 -x MKL_NUM_THREADS=1 "
[[ "$out" == *" $BIN bench-comm --max-bytes 1024" ]] || fail "command does not end with the binary and its args: $out"
# One core per rank: unbound, so the kernel can move a rank off a core another process is using.
out=$(ZT_DRY_RUN=1 "$ZT_RUN" -n 2 --cores-per-node 2 -- x)
assert_contains "$out" "-np 2 --bind-to none -x"
assert_not_contains "$out" "--oversubscribe"
# A spare core (3 ranks, 4 cores): unbound, so comm threads can use it.
out=$(ZT_DRY_RUN=1 "$ZT_RUN" -n 3 --cores-per-node 4 -- x)
assert_contains "$out" "-np 3 --bind-to none -x"
# More ranks than cores: oversubscribed, unbound.
out=$("$ZT_RUN" --dry-run -n 4 --cores-per-node 2 -- x)
assert_contains "$out" "-np 4 --bind-to none --oversubscribe"
# User thread counts are kept; ZT_* settings of the job are forwarded, launcher settings are not.
out=$(OMP_NUM_THREADS=3 ZT_SOMETHING=1 ZT_DRY_RUN=1 "$ZT_RUN" -n 1 -- x)
assert_contains "$out" "-x OMP_NUM_THREADS=3"
assert_contains "$out" "-x ZT_SOMETHING"
assert_not_contains "$out" "-x ZT_BIN"
pass "local dry runs"

# Multi-node: hostfile, ppr mapping, interface selection for btl and oob, rsh agent, transport.
printf '# comment\nnodeA slots=2\n\nnodeB slots=2\n' >"$TMP/hosts"
out=$(ZT_DRY_RUN=1 ZT_NET_IF=10.9.0.0/16 ZT_MPI_BTL=tcp,self ZT_MPI_PML=ob1 ZT_RSH_AGENT=/x/agent \
  "$ZT_RUN" --hostfile "$TMP/hosts" --ppn 2 -- train --config c.yaml)
assert_contains "$out" "--hostfile $TMP/hosts -np 4 --map-by ppr:2:node --bind-to none"
assert_contains "$out" "--mca btl_tcp_if_include 10.9.0.0/16 --mca oob_tcp_if_include 10.9.0.0/16"
assert_contains "$out" "--mca pml ob1 --mca btl tcp,self --mca plm_rsh_agent /x/agent --mca plm_rsh_no_tree_spawn 1"
assert_not_contains "$out" "NCCL_SOCKET_IFNAME"
out=$(ZT_DRY_RUN=1 ZT_NET_IF=eth1 "$REPO/launch/multinode.sh" --hostfile "$TMP/hosts" --ppn 4 --cores-per-node 16 -- train)
assert_contains "$out" "-np 8 --map-by ppr:4:node:PE=4 --bind-to core"
assert_contains "$out" "-x NCCL_SOCKET_IFNAME=eth1"
pass "multi-node dry runs"

# Usage errors exit 2 with a message.
rc=0; err=$("$ZT_RUN" -n 2 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status without '--'"; assert_contains "$err" "missing '-- <zerotrain args>'"
rc=0; err=$("$ZT_RUN" -n two -- x 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status with -n two"
rc=0; err=$(ZT_BIN=/nonexistent "$ZT_RUN" -n 2 -- x 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status with a missing binary"; assert_contains "$err" "not found"
# --cores-per-node takes a positive integer only: anything else was evaluated as a bash expression
# (a command substitution ran) or passed silently.
for value in 2.5 0 -1 'np[$(touch "$TMP/ran")]'; do
  rc=0; err=$(ZT_DRY_RUN=1 "$ZT_RUN" -n 2 --cores-per-node "$value" -- x 2>&1) || rc=$?
  assert_eq "$rc" 2 "exit status with --cores-per-node '$value'"
  assert_contains "$err" "must be a positive integer, got '$value'"
done
[[ ! -e "$TMP/ran" ]] || fail "--cores-per-node ran a command"
pass "errors"

# A real run: 2 ranks of bench-comm through zt-run (mpirun's status is zt-run's).
rc=0
out=$("$ZT_RUN" -n 2 -- bench-comm --ops all_reduce,all_gather --max-bytes 1024 --iters 2 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "zt-run -n 2 -- bench-comm exited $rc:"$'\n'"$out"
assert_contains "$out" "2 ranks (2 on this host)"
assert_contains "$out" "# wrong elements in total: 0"
pass "2-rank bench-comm through zt-run"
