#!/usr/bin/env bash
# netns-hosts.sh --host-cpus: every process of a simulated host — mpirun on host 0, the MPI daemon
# and the rank on host 1 — runs pinned to that host's CPUs (taskset), as each rank reports from
# its own affinity; and CPU lists that do not fit are refused before anything is created.
# usage: netns_host_cpus_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
BIN=$1 REPO=$2
H="$REPO/bench/netns/netns-hosts.sh"

require_netns "$H"
[[ $(nproc) -ge 2 ]] || { echo "SKIP: --host-cpus auto needs 2 CPUs, this machine has $(nproc)"; exit 77; }

rc=0
out=$("$H" up 2 1gbit --host-cpus 0 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status of --host-cpus with one list for two hosts"
assert_contains "$out" "--host-cpus '0' gives 1 CPU lists for 2 hosts"
rc=0
out=$("$H" up 2 1gbit --host-cpus 0/100000 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status of --host-cpus with a CPU this machine lacks"
assert_contains "$out" "taskset cannot use CPU list '100000' here"
pass "CPU lists that do not fit are refused"

# Each rank reports its network namespace and the CPUs it may run on before becoming zerotrain.
cat >"$TMP/where.sh" <<WHERE
#!/usr/bin/env bash
echo "rank \$OMPI_COMM_WORLD_RANK in \$(ip netns identify) cpus \$(taskset -pc \$\$ | sed 's/.*: //') pinned \$ZT_NETNS_HOST_CPUS" >>"$TMP/where.log"
exec "$BIN" "\$@"
WHERE
chmod +x "$TMP/where.sh"
rc=0
out=$(ZT_BIN="$TMP/where.sh" "$H" with-hosts 2 1gbit --host-cpus auto -- bash -c \
  'echo "$ZT_NETNS_ID" >"$0"; exec "$@"' "$TMP/id" \
  "$REPO/launch/zt-run" --hostfile @hostfile --ppn 1 -- bench-comm --ops all_reduce --max-bytes 4K --iters 2 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "with-hosts --host-cpus auto ... bench-comm exited $rc:"$'\n'"$out"
assert_contains "$out" "host CPUs 0/1 (taskset)"
assert_contains "$out" "# wrong elements in total: 0"
id=$(cat "$TMP/id")
where=$(sort "$TMP/where.log")
assert_contains "$where" "rank 0 in $id-h0 cpus 0 pinned 0/1"
assert_contains "$where" "rank 1 in $id-h1 cpus 1 pinned 0/1"
pass "each simulated host's rank runs on its own CPU: $(tr '\n' ';' <<<"$where")"
