#!/usr/bin/env bash
# A real Slurm cluster of 2 nodes on this machine (tests/launch/slurm-cluster.sh: munged, slurmctld
# and a slurmd per simulated host, each host a network namespace): the nodes register, srun starts
# tasks on both hosts, zerotrain trains across them through `srun --mpi=pmix` (no mpirun, no
# hostfile), and launch/slurm.sbatch runs the same job under `sbatch --wait`. Afterwards nothing
# of the cluster may be left. Exit 77 (CTest skip) without namespaces, root or Slurm/munge.
# usage: slurm_cluster_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
id=$ZT_SLURM_ID

out=$(slurm sinfo -h -N -o '%N %t' | sort)
assert_eq "$out" "$h0 idle"$'\n'"$h1 idle" "sinfo -N"
out=$(slurm srun -N2 -n2 hostname | sort)
assert_eq "$out" "$h0"$'\n'"$h1" "srun -N2 -n2 hostname"
pass "sinfo shows 2 idle nodes; srun -N2 -n2 hostname ran on $h0 and $h1"

# Each rank reports where it runs (hostname, network namespace, ranks in Slurm and PMIx) before
# becoming zerotrain.
cat >"$TMP/where.sh" <<WHERE
#!/usr/bin/env bash
echo "task \$SLURM_PROCID pmix rank \${PMIX_RANK:-none} host \$(hostname) netns \$(ip netns identify)" >>"\$ZT_WHERE_LOG"
exec "$BIN" "\$@"
WHERE
chmod +x "$TMP/where.sh"
expected_where="task 0 pmix rank 0 host $h0 netns $h0"$'\n'"task 1 pmix rank 1 host $h1 netns $h1"

job=("${JOB[@]}" --set train.steps=3 --set checkpoint.interval=3)

# 1. srun straight from the submit host: 2 nodes x 1 rank, wired up by PMIx.
t1=$SECONDS
rc=0
out=$(cd "$TMP" && ZT_WHERE_LOG="$TMP/where-srun.log" slurm srun --mpi=pmix -N2 --ntasks-per-node=1 \
  --kill-on-bad-exit=1 "$TMP/where.sh" "${job[@]}" --set "logging.run_dir=$TMP/srun" \
  --set "checkpoint.dir=$TMP/srun/checkpoints" 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "srun --mpi=pmix -N2 zerotrain exited $rc:"$'\n'"$out"$'\n'"$("$C" logs "$D")"
assert_contains "$out" "on 2 rank(s)"
assert_contains "$out" "step 3/3"
assert_eq "$(sort "$TMP/where-srun.log")" "$expected_where" "where the srun ranks ran"
assert_eq "$(steps "$TMP/srun" | paste -sd' ')" "1 2 3" "steps in metrics.jsonl of the srun run"
[[ -f "$TMP/srun/checkpoints/step_00000003/COMPLETE" ]] || fail "the srun run wrote no complete checkpoint at step 3"
pass "srun --mpi=pmix: zerotrain trained 3 steps on $h0 + $h1 in $((SECONDS - t1)) s"

# 2. The repository's batch script under sbatch --wait: it runs srun --mpi=pmix itself. ZT_NET_IF
# (10.77.0.0/24, set by the harness) makes it pin Open MPI's TCP traffic to the hosts' eth0.
t2=$SECONDS
rc=0
out=$(cd "$TMP" && ZT_WHERE_LOG="$TMP/where-sbatch.log" ZT_REPO="$REPO" ZT_BIN="$TMP/where.sh" \
  slurm sbatch --wait --parsable --nodes=2 --ntasks-per-node=1 --chdir="$TMP" \
  --output="$TMP/sbatch-%j.out" "$REPO/launch/slurm.sbatch" "${job[@]}" \
  --set "logging.run_dir=$TMP/sbatch" --set "checkpoint.dir=$TMP/sbatch/checkpoints" 2>&1) || rc=$?
jobid=$(head -n 1 <<<"$out")
log=$(cat "$TMP/sbatch-$jobid.out" 2>/dev/null || true)
[[ $rc -eq 0 ]] || fail "sbatch --wait launch/slurm.sbatch exited $rc:"$'\n'"$out"$'\n'"job log:"$'\n'"$log"$'\n'"$("$C" logs "$D")"
[[ "$jobid" =~ ^[0-9]+$ ]] || fail "sbatch --parsable printed no job id:"$'\n'"$out"
assert_contains "$log" "slurm.sbatch: job $jobid" "job log"
assert_contains "$log" "on $ZT_SLURM_ID-h[0-1]: 2 nodes x 1 tasks" "job log"
assert_contains "$log" "on 2 rank(s)" "job log"
assert_contains "$log" "step 3/3" "job log"
assert_eq "$(sort "$TMP/where-sbatch.log")" "$expected_where" "where the sbatch ranks ran"
assert_eq "$(steps "$TMP/sbatch" | paste -sd' ')" "1 2 3" "steps in metrics.jsonl of the sbatch run"
state=$(slurm scontrol -o show job "$jobid")
assert_contains "$state" "JobState=COMPLETED" "scontrol show job $jobid"
assert_contains "$state" "ExitCode=0:0" "scontrol show job $jobid"
pass "sbatch --wait launch/slurm.sbatch: job $jobid COMPLETED with exit 0, 3 steps, in $((SECONDS - t2)) s"

# 3. down leaves nothing: no process of the cluster (zombies excepted: PID 1 adopts the daemons
# and reaps them in its own time), no namespace, no /etc/netns entry, no socket or pid file.
"$C" down "$D" >/dev/null 2>&1 || fail "slurm-cluster.sh down failed"
left=$(ps -eo stat=,pid=,args= | awk -v d="$D" -v id="$id" '$1 !~ /^Z/ && (index($0, d) || index($0, id))' | grep -v awk || true)
[[ -z "$left" ]] || fail "processes left after down:"$'\n'"$left"
left=$(ip netns list | grep -- "$id" || true)
[[ -z "$left" ]] || fail "namespaces left after down: $left"
compgen -G "/etc/netns/$id-*" >/dev/null && fail "/etc/netns/$id-* left after down"
[[ ! -e "$D/munge/munge.socket.2" && ! -e "$D/env" ]] || fail "munge socket or env file left in $D"
"$C" down "$D" >/dev/null 2>&1 || fail "a second slurm-cluster.sh down failed (must be idempotent)"
pass "down left nothing behind (whole test $((SECONDS - t0)) s)"
