#!/usr/bin/env bash
# The simulated-network harness end to end: 2 hosts (network namespaces, veth + bridge, tbf), a
# 2-host x 1-rank bench-comm through `zt-run --hostfile` and the harness's rsh agent, over TCP only;
# then nothing of the hosts may be left. Exit 77 (CTest skip) where namespaces cannot be made.
# usage: netns_two_hosts_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
BIN=$1 REPO=$2
H="$REPO/bench/netns/netns-hosts.sh"

require_netns "$H"

# Each rank reports where it runs (network namespace and hostname) before becoming zerotrain.
cat >"$TMP/where.sh" <<WHERE
#!/usr/bin/env bash
echo "rank \$OMPI_COMM_WORLD_RANK runs in netns \$(ip netns identify) host \$(hostname)" >>"$TMP/where.log"
exec "$BIN" "\$@"
WHERE
chmod +x "$TMP/where.sh"
links_before=$(ip -o link show | awk -F': ' '{print $2}' | sort)

rc=0
out=$(ZT_BIN="$TMP/where.sh" "$H" with-hosts 2 1gbit -- bash -c \
  'echo "$ZT_NETNS_ID" >"$0"; exec "$@"' "$TMP/id" \
  "$REPO/launch/zt-run" --hostfile @hostfile --ppn 1 -- bench-comm --ops all_reduce,broadcast --max-bytes 64K --iters 2 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "with-hosts ... zt-run --hostfile ... bench-comm exited $rc:"$'\n'"$out"
assert_contains "$out" "2 ranks (1 on this host)"
assert_contains "$out" "# wrong elements in total: 0"
id=$(cat "$TMP/id")
where=$(sort "$TMP/where.log")
assert_contains "$where" "rank 0 runs in netns $id-h0"
assert_contains "$where" "rank 1 runs in netns $id-h1"
pass "bench-comm over 2 simulated hosts ($id): $(tr '\n' ';' <<<"$where")"

# Nothing left: namespaces, state, /etc/netns entries, links in the root namespace.
left=$(ip netns list | grep -- "$id" || true)
[[ -z "$left" ]] || fail "namespaces left behind: $left"
[[ ! -e "${TMPDIR:-/tmp}/zt-netns.$id" ]] || fail "state dir ${TMPDIR:-/tmp}/zt-netns.$id left behind"
compgen -G "/etc/netns/$id-*" >/dev/null && fail "/etc/netns/$id-* left behind"
links_after=$(ip -o link show | awk -F': ' '{print $2}' | sort)
new_links=$(comm -13 <(echo "$links_before") <(echo "$links_after") | grep -E '^(eth0|p[0-9]|br0)|zt' || true)
[[ -z "$new_links" ]] || fail "links left in the root namespace: $new_links"
pass "cleanup left nothing behind"
