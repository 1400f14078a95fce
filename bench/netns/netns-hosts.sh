#!/usr/bin/env bash
# netns-hosts.sh — simulated multi-node network on one machine, for measuring communication overlap.
#
# On one machine, shared-memory MPI makes communication nearly free, which hides exactly the cost
# that overlapping communication with backward is meant to hide. This script builds N "hosts" as
# Linux network namespaces, each with one virtual NIC (veth) plugged into a bridge that lives in a
# private "switch" namespace, and limits every NIC to a line rate with the tbf qdisc. mpirun then
# runs inside host 0 and starts the other hosts' daemons through a generated rsh agent that enters
# their namespace with `ip netns exec` — real TCP, real rate limits, real mpirun, one machine.
#
# Topology (nothing is added to the root namespace, so nothing there can be left behind):
#
#   ns <id>-h0: lo, eth0 10.77.0.1/24 (tbf)  ──veth──  p0 (tbf) ┐
#   ns <id>-h1: lo, eth0 10.77.0.2/24 (tbf)  ──veth──  p1 (tbf) ├─ br0 in ns <id>-sw
#   ...                                                         ┘
#
# The hosts have no route anywhere else: traffic can only go to the other namespaces of the same
# invocation or to their own loopback. Each eth0 limits what its host sends (tbf, egress); each
# switch port pI limits what host I receives (like a switch port of that speed), unless --tx-only.
# Names carry a per-invocation id (zt<pid><random>) so parallel CI runs never collide.
#
# CPUs: the hosts share this machine's cores unless --host-cpus gives each its own: host I's
# processes (mpirun on host 0, the MPI daemon and ranks elsewhere) then run under
# `taskset -c <CPUs of I>`, inherited by every thread they start.
#
# Delay: tbf cannot delay. netem can, but is missing on the kernels we run on; --delay uses netem
# when the kernel has it and otherwise warns and runs without delay (never silently).
#
# Exit status 77 means "cannot run here" (not root, no CAP_NET_ADMIN, ip/tc missing, namespaces or
# tbf denied) — tests map it to a skip with the printed reason.
set -euo pipefail

readonly EXIT_CANNOT_RUN=77
readonly EXIT_USAGE=2
PROG=$(basename "$0")

usage() {
  cat <<EOF
usage:
  $PROG check                                  can namespaces + veth + tbf be created here? (0 / 77)
  $PROG with-hosts N RATE [opts] -- CMD...     up, run CMD on host 0, always tear down (EXIT/INT/TERM)
  $PROG up N RATE [opts]                       create hosts; prints the id and the env file
  $PROG run ID -- CMD...                       run CMD on host 0 (where mpirun belongs) with the env
  $PROG exec ID I -- CMD...                    run CMD on host I
  $PROG stats ID                               tc -s statistics of every NIC (proof of rate limiting)
  $PROG down ID                                kill processes left in the namespaces, remove everything

RATE is a tc rate: 200mbit, 1gbit, 10gbit ... ('none' = no limit)
options for up / with-hosts:
  --burst SIZE      tbf bucket size (default 256kb; must exceed the 64 KiB GSO packets of veth)
  --latency TIME    tbf queue limit expressed as time (default 50ms)
  --delay TIME      one-way delay; needs netem, skipped with a warning when the kernel lacks it
  --tx-only         limit only each host's egress, not its ingress (switch ports unlimited)
  --slots S         slots per host in the generated hostfile (default: nproc = $(nproc))
  --host-cpus SPEC  pin each host's processes to its own CPUs with taskset: 'auto' = host I on CPU I
                    (needs N <= nproc), or one taskset CPU list per host separated by '/', e.g. 0/1 or 0-1/2-3
  --subnet A.B.C    /24 used inside the namespaces (default 10.77.0)
  --mtu M           MTU of the virtual links (default 1500)
  --keep-going      (with-hosts) keep the hosts if CMD fails, for debugging; prints how to remove them

Inside CMD (and in the env file written by up) these are set:
  ZT_NETNS_ID ZT_NETNS_HOSTFILE ZT_NETNS_HOSTS ZT_NETNS_RATE ZT_NETNS_N
  ZT_NETNS_HOST_CPUS     the CPU lists of the hosts separated by '/' (empty: not pinned)
  ZT_RSH_AGENT ZT_NET_IF ZT_MPI_BTL=tcp,self ZT_MPI_PML=ob1   (read by launch/zt-run --hostfile)
  ZT_NETNS_MPIRUN_ARGS   the same as mpirun flags, for a plain mpirun: mpirun \$ZT_NETNS_MPIRUN_ARGS ...

example:
  $PROG with-hosts 2 200mbit -- launch/zt-run --hostfile @hostfile -- bench-comm --ops all_reduce
  ('@hostfile' in CMD is replaced by the generated hostfile path)
EOF
}

die() { echo "$PROG: error: $*" >&2; exit 1; }
usage_error() { echo "$PROG: error: $*" >&2; exit "$EXIT_USAGE"; }
cannot_run() { echo "$PROG: cannot run here: $*" >&2; exit "$EXIT_CANNOT_RUN"; }
warn() { echo "$PROG: warning: $*" >&2; }
note() { [[ -n "${ZT_NETNS_QUIET:-}" ]] || echo "$PROG: $*" >&2; }

state_root() { echo "${ZT_NETNS_STATE_ROOT:-${TMPDIR:-/tmp}}"; }
state_dir() { echo "$(state_root)/zt-netns.$1"; }

# Probes every capability the harness needs, with a message naming the one that is missing.
check_capabilities() {
  local tool
  for tool in ip tc; do
    command -v "$tool" >/dev/null 2>&1 || cannot_run "'$tool' not found (install iproute2: bash scripts/setup.sh)"
  done
  if [[ $(id -u) -ne 0 ]]; then
    cannot_run "needs root (network namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN); running as uid $(id -u)"
  fi
  local probe="ztprobe$$" err="" what=""
  if ! err=$(ip netns add "$probe" 2>&1); then
    cannot_run "'ip netns add' failed: $err (no CAP_SYS_ADMIN/CAP_NET_ADMIN, or unshare denied by seccomp/container)"
  fi
  if ! err=$(ip -n "$probe" link add name v0 type veth peer name v1 2>&1); then
    what="cannot create a veth pair inside a namespace: $err (kernel without veth?)"
  elif ! err=$(ip -n "$probe" link add name br0 type bridge 2>&1); then
    what="cannot create a bridge inside a namespace: $err (kernel without bridge support?)"
  elif ! err=$(tc -n "$probe" qdisc add dev v0 root tbf rate 100mbit burst 256kb latency 50ms 2>&1); then
    what="cannot add a tbf qdisc: $err (kernel without sch_tbf?)"
  fi
  ip netns del "$probe" 2>/dev/null || true
  [[ -z "$what" ]] || cannot_run "$what"
}

netem_available() {
  local probe="ztnetem$$" ok=1
  ip netns add "$probe" 2>/dev/null || return 1
  ip -n "$probe" link add name v0 type veth peer name v1 2>/dev/null &&
    tc -n "$probe" qdisc add dev v0 root netem delay 1ms 2>/dev/null && ok=0
  ip netns del "$probe" 2>/dev/null || true
  return $ok
}

uts_available() { unshare --uts true 2>/dev/null; }

# All names are derived from the id and N, so `down` needs only the state dir (or, if it is gone,
# the id: it also sweeps namespaces named <id>-*).
ns_host() { echo "$1-h$2"; }
ns_switch() { echo "$1-sw"; }

cmd_up() {
  local n="${1:-}" rate="${2:-}"
  [[ "$n" =~ ^[0-9]+$ && "$n" -ge 2 && "$n" -le 250 ]] || usage_error "N must be 2..250, got '${n}' (see --help)"
  [[ -n "$rate" ]] || usage_error "missing RATE (see --help)"
  shift 2
  local burst=256kb latency=50ms delay="" tx_only=0 slots subnet=10.77.0 mtu=1500 id="" host_cpus=""
  slots=$(nproc)
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --burst) burst="$2"; shift 2 ;;
      --latency) latency="$2"; shift 2 ;;
      --delay) delay="$2"; shift 2 ;;
      --tx-only) tx_only=1; shift ;;
      --slots) slots="$2"; shift 2 ;;
      --subnet) subnet="$2"; shift 2 ;;
      --mtu) mtu="$2"; shift 2 ;;
      --id) id="$2"; shift 2 ;;
      --host-cpus) host_cpus="$2"; shift 2 ;;
      *) usage_error "unknown option '$1' (see --help)" ;;
    esac
  done
  if ! [[ "$subnet" =~ ^(10\.[0-9]{1,3}|192\.168)\.[0-9]{1,3}$ ]]; then
    usage_error "--subnet must be the first three octets of a private 10.x or 192.168.x /24, got '$subnet'"
  fi
  local cpu_lists=()
  if [[ -n "$host_cpus" ]]; then
    command -v taskset >/dev/null 2>&1 || cannot_run "'taskset' not found (util-linux), needed by --host-cpus"
    if [[ "$host_cpus" == auto ]]; then
      [[ "$n" -le $(nproc) ]] || usage_error "--host-cpus auto gives each host one CPU: $n hosts > $(nproc) CPUs"
      for ((i = 0; i < n; i++)); do cpu_lists+=("$i"); done
    else
      IFS=/ read -r -a cpu_lists <<<"$host_cpus"
      [[ ${#cpu_lists[@]} -eq "$n" ]] || usage_error "--host-cpus '$host_cpus' gives ${#cpu_lists[@]} CPU lists for $n hosts"
    fi
    local list
    for list in "${cpu_lists[@]}"; do
      taskset -c "$list" true 2>/dev/null || usage_error "--host-cpus: taskset cannot use CPU list '$list' here"
    done
  fi
  check_capabilities
  [[ -n "$id" ]] || id="zt$$$(printf '%04x' $((RANDOM % 65536)))"
  local dir
  dir=$(state_dir "$id")
  mkdir -p "$dir"
  echo "$n" >"$dir/n"
  UP_ID="$id"

  local use_uts=1
  uts_available || { use_uts=0; warn "unshare --uts denied: hosts keep the machine's hostname (ip netns identify still tells them apart)"; }
  local apply_delay=0
  if [[ -n "$delay" ]]; then
    if netem_available; then apply_delay=1; else
      warn "--delay $delay not applied: the netem qdisc is not available on this kernel (tc qdisc add ... netem fails); running without added delay"
      delay=""
    fi
  fi

  local sw i host ip cpus limit_args=()
  sw=$(ns_switch "$id")
  ip netns add "$sw"
  ip -n "$sw" link set lo up
  ip -n "$sw" link add name br0 type bridge
  ip -n "$sw" link set br0 up
  if [[ "$rate" != none ]]; then
    limit_args=(tbf rate "$rate" burst "$burst" latency "$latency")
  fi
  : >"$dir/hostfile"
  : >"$dir/hosts.map"
  local hosts_file_lines="127.0.0.1 localhost"$'\n'
  for ((i = 0; i < n; i++)); do
    hosts_file_lines+="$subnet.$((i + 1)) $(ns_host "$id" "$i")"$'\n'
  done
  for ((i = 0; i < n; i++)); do
    host=$(ns_host "$id" "$i")
    ip="$subnet.$((i + 1))"
    ip netns add "$host"
    # The veth is created with both ends already inside their namespaces: no name in the root
    # namespace is ever used, so parallel runs cannot collide and nothing can leak there.
    ip link add name eth0 netns "$host" mtu "$mtu" type veth peer name "p$i" netns "$sw" mtu "$mtu"
    ip -n "$sw" link set "p$i" master br0
    ip -n "$sw" link set "p$i" up
    ip -n "$host" link set lo up
    ip -n "$host" addr add "$ip/24" dev eth0
    ip -n "$host" link set eth0 up
    # IPv6 is not used; turning it off keeps router solicitations and DAD out of the measurement.
    ip netns exec "$host" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
    if [[ ${#limit_args[@]} -gt 0 ]]; then
      tc -n "$host" qdisc add dev eth0 root handle 1: "${limit_args[@]}"
      [[ $tx_only -eq 1 ]] || tc -n "$sw" qdisc add dev "p$i" root handle 1: "${limit_args[@]}"
      if [[ $apply_delay -eq 1 ]]; then
        tc -n "$host" qdisc add dev eth0 parent 1:1 handle 10: netem delay "$delay"
      fi
    elif [[ $apply_delay -eq 1 ]]; then
      tc -n "$host" qdisc add dev eth0 root handle 10: netem delay "$delay"
    fi
    # /etc/netns/<ns>/hosts is bind-mounted over /etc/hosts by `ip netns exec` for that namespace
    # only: host names resolve inside the simulation without touching the machine's /etc/hosts.
    if mkdir -p "/etc/netns/$host" 2>/dev/null; then
      printf '%s' "$hosts_file_lines" >"/etc/netns/$host/hosts"
      echo "$host" >>"$dir/etc-netns"
    fi
    echo "$ip slots=$slots" >>"$dir/hostfile"
    cpus="${cpu_lists[i]:--}"  # '-' = not pinned
    echo "$ip $host $cpus" >>"$dir/hosts.map"
  done

  # The rsh agent OpenMPI's plm uses instead of ssh: `agent [opts] HOST CMD...`. It runs CMD the way
  # sshd would (`sh -c "$*"`), inside HOST's namespace, keeping the environment and the working
  # directory (the "remote" host shares this filesystem).
  cat >"$dir/rsh-agent" <<EOF
#!/usr/bin/env bash
# Generated by $PROG for $id: OpenMPI rsh agent that "logs in" to a simulated host.
set -euo pipefail
while [[ \$# -gt 0 && "\$1" == -* ]]; do shift; done   # ssh-style options (e.g. -x) mean nothing here
[[ \$# -ge 2 ]] || { echo "rsh-agent($id): usage: rsh-agent HOST CMD..." >&2; exit 255; }
target="\$1"; shift
ns="" pin=()
while read -r ip name cpus; do
  if [[ "\$target" == "\$ip" || "\$target" == "\$name" ]]; then
    ns="\$name"
    [[ "\$cpus" == - ]] || pin=(taskset -c "\$cpus")
  fi
done <"$dir/hosts.map"
[[ -n "\$ns" ]] || { echo "rsh-agent($id): unknown host '\$target' (known: \$(tr '\n' ' ' <"$dir/hosts.map"))" >&2; exit 255; }
if [[ $use_uts -eq 1 ]]; then
  exec ip netns exec "\$ns" "\${pin[@]}" unshare --uts -- /bin/sh -c 'hostname "\$0" && exec /bin/sh -c "\$1"' "\$ns" "\$*"
else
  exec ip netns exec "\$ns" "\${pin[@]}" /bin/sh -c "\$*"
fi
EOF
  chmod +x "$dir/rsh-agent"

  local hosts subnet_cidr="$subnet.0/24"
  hosts=$(awk '{print $1}' "$dir/hostfile" | paste -sd' ')
  local mpirun_args="--mca plm_rsh_agent $dir/rsh-agent --mca plm_rsh_no_tree_spawn 1 --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include $subnet_cidr --mca oob_tcp_if_include $subnet_cidr"
  cat >"$dir/env" <<EOF
export ZT_NETNS_ID=$id
export ZT_NETNS_N=$n
export ZT_NETNS_RATE=$rate
export ZT_NETNS_HOSTFILE=$dir/hostfile
export ZT_NETNS_HOSTS="$hosts"
export ZT_NETNS_HOST_CPUS="$(IFS=/; echo "${cpu_lists[*]}")"
export ZT_NETNS_USE_UTS=$use_uts
export ZT_RSH_AGENT=$dir/rsh-agent
export ZT_NET_IF=$subnet_cidr
export ZT_MPI_BTL=tcp,self
export ZT_MPI_PML=ob1
export ZT_NETNS_MPIRUN_ARGS="$mpirun_args"
EOF
  note "up: $n hosts ($hosts) id $id, rate ${rate}${delay:+, delay $delay}${host_cpus:+, host CPUs $(IFS=/; echo "${cpu_lists[*]}") (taskset)}$([[ $tx_only -eq 1 ]] && echo ', egress only'), state in $dir"
}

# Runs "$@" inside namespace $2 of id $1 with the env file loaded and (when possible) its own UTS
# namespace so that `hostname` names the simulated host.
run_in_host() {
  local id="$1" i="$2"; shift 2
  local dir host
  dir=$(state_dir "$id")
  [[ -f "$dir/env" ]] || die "no hosts with id '$id' (no $dir/env); run '$PROG up' first"
  host=$(ns_host "$id" "$i")
  ip netns list | grep -qw -- "$host" || die "namespace $host does not exist"
  # shellcheck disable=SC1091
  source "$dir/env"
  local args=() a pin=() cpus
  for a in "$@"; do args+=("${a//@hostfile/$ZT_NETNS_HOSTFILE}"); done
  cpus=$(awk -v h="$host" '$2 == h {print $3}' "$dir/hosts.map")
  [[ -z "$cpus" || "$cpus" == - ]] || pin=(taskset -c "$cpus")
  if [[ "$ZT_NETNS_USE_UTS" -eq 1 ]]; then
    # shellcheck disable=SC2016  # expanded by the inner shell
    ip netns exec "$host" "${pin[@]}" unshare --uts -- /bin/sh -c 'hostname "$0" && exec "$@"' "$host" "${args[@]}"
  else
    ip netns exec "$host" "${pin[@]}" "${args[@]}"
  fi
}

cmd_down() {
  local id="${1:-}"
  [[ -n "$id" ]] || die "down needs the id printed by up"
  [[ "$id" =~ ^zt[0-9a-z]+$ ]] || die "refusing id '$id' (ids look like zt12345abcd)"
  local dir ns attempt
  dir=$(state_dir "$id")
  local namespaces=()
  while read -r ns _; do
    [[ "$ns" == "$id"-* ]] && namespaces+=("$ns")
  done < <(ip netns list 2>/dev/null)
  # Processes still inside (an mpirun or orted that survived an interrupt) would keep a deleted
  # namespace alive invisibly; end them first, by pid, TERM then KILL.
  local pid_list=()
  for attempt in TERM TERM TERM KILL; do
    pid_list=()
    for ns in "${namespaces[@]}"; do
      mapfile -t -O "${#pid_list[@]}" pid_list < <(ip netns pids "$ns" 2>/dev/null)
    done
    [[ ${#pid_list[@]} -gt 0 ]] || break
    kill -s "$attempt" "${pid_list[@]}" 2>/dev/null || true
    sleep 1
  done
  for ns in "${namespaces[@]}"; do
    ip netns del "$ns" 2>/dev/null || warn "could not delete namespace $ns"
    [[ -d "/etc/netns/$ns" ]] && rm -rf -- "/etc/netns/$ns"
  done
  rmdir /etc/netns 2>/dev/null || true
  [[ -d "$dir" ]] && rm -rf -- "$dir"
  note "down: removed ${#namespaces[@]} namespaces of $id"
}

cmd_stats() {
  local id="$1" dir n i
  dir=$(state_dir "$id")
  n=$(cat "$dir/n")
  for ((i = 0; i < n; i++)); do
    echo "== $(ns_host "$id" "$i") eth0 (egress of host $i)"
    tc -s -n "$(ns_host "$id" "$i")" qdisc show dev eth0
    echo "== switch port p$i (ingress of host $i)"
    tc -s -n "$(ns_switch "$id")" qdisc show dev "p$i"
  done
}

cmd_with_hosts() {
  local n="${1:-}" rate="${2:-}"
  [[ $# -ge 2 ]] || { usage >&2; exit $EXIT_USAGE; }
  shift 2
  local up_args=() keep_going=0
  while [[ $# -gt 0 && "$1" != -- ]]; do
    case "$1" in
      --keep-going) keep_going=1; shift ;;
      --tx-only) up_args+=("$1"); shift ;;
      *) [[ $# -ge 2 ]] || die "option '$1' needs a value"; up_args+=("$1" "$2"); shift 2 ;;
    esac
  done
  [[ "${1:-}" == -- && $# -ge 2 ]] || { usage >&2; echo "$PROG: with-hosts needs '-- CMD...'" >&2; exit $EXIT_USAGE; }
  shift
  UP_ID=""
  WITH_RC=0
  CHILD=""
  # Teardown runs on every way out: normal exit, a failure in up, Ctrl-C, kill -TERM.
  # shellcheck disable=SC2317  # invoked by the EXIT trap
  on_exit() {
    local rc=$?
    [[ $WITH_RC -ne 0 ]] && rc=$WITH_RC
    trap - EXIT INT TERM
    if [[ -n "$CHILD" ]]; then kill -TERM "$CHILD" 2>/dev/null || true; fi
    if [[ -n "$UP_ID" ]]; then
      if [[ $keep_going -eq 1 && $rc -ne 0 ]]; then
        warn "keeping hosts $UP_ID for debugging; remove them with: $0 down $UP_ID"
      else
        cmd_down "$UP_ID" || true
      fi
    fi
    # Reap the command (down has ended it) so that no zombie outlives us.
    [[ -z "$CHILD" ]] || wait "$CHILD" 2>/dev/null || true
    exit "$rc"
  }
  trap on_exit EXIT
  trap 'echo "$PROG: interrupted (INT), tearing down" >&2; WITH_RC=130; exit 130' INT
  trap 'echo "$PROG: terminated (TERM), tearing down" >&2; WITH_RC=143; exit 143' TERM
  cmd_up "$n" "$rate" "${up_args[@]}"
  # The command runs in the background and we `wait` for it: a trapped signal interrupts `wait`
  # at once, whereas a foreground child would delay the teardown until it exits by itself.
  # stdin stays attached so interactive use of CMD works.
  run_in_host "$UP_ID" 0 "$@" <&0 &
  CHILD=$!
  local rc=0
  wait "$CHILD" || rc=$?
  CHILD=""
  WITH_RC=$rc
  exit "$rc"
}

main() {
  local sub="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "$sub" in
    -h | --help | help) usage ;;
    check) check_capabilities; echo "$PROG: ok: namespaces, veth, bridge and tbf work here$(netem_available && echo ', netem available' || echo '; netem NOT available (no delay emulation)')" ;;
    up)
      [[ $# -ge 2 ]] || { usage >&2; exit $EXIT_USAGE; }
      UP_ID=""
      # A failure (or Ctrl-C) half-way through up removes what was created so far.
      trap 'rc=$?; [[ $rc -eq 0 || -z "$UP_ID" ]] || cmd_down "$UP_ID"; exit $rc' EXIT
      trap 'exit 130' INT
      trap 'exit 143' TERM
      cmd_up "$@"
      trap - EXIT INT TERM
      echo "$UP_ID"
      echo "env: source $(state_dir "$UP_ID")/env" >&2
      ;;
    run)
      [[ $# -ge 3 && "$2" == -- ]] || { usage >&2; exit $EXIT_USAGE; }
      local id="$1"; shift 2
      run_in_host "$id" 0 "$@"
      ;;
    exec)
      [[ $# -ge 4 && "$3" == -- ]] || { usage >&2; exit $EXIT_USAGE; }
      local id="$1" i="$2"; shift 3
      run_in_host "$id" "$i" "$@"
      ;;
    stats) [[ $# -eq 1 ]] || { usage >&2; exit $EXIT_USAGE; }; cmd_stats "$1" ;;
    down) [[ $# -eq 1 ]] || { usage >&2; exit $EXIT_USAGE; }; cmd_down "$1" ;;
    with-hosts) cmd_with_hosts "$@" ;;
    "") usage >&2; exit $EXIT_USAGE ;;
    *) usage >&2; echo "$PROG: unknown command '$sub'" >&2; exit $EXIT_USAGE ;;
  esac
}

main "$@"
