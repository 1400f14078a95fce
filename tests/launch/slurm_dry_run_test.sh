#!/usr/bin/env bash
# slurm.sbatch --dry-run prints the srun command for the allocation described by SLURM_* variables.
# usage: slurm_dry_run_test.sh ZEROTRAIN_BIN REPO
source "$(dirname "$0")/lib.sh"
BIN=$1 REPO=$2
SBATCH="$REPO/launch/slurm.sbatch"
unset "${!SLURM_@}" ZT_NET_IF ZT_SRUN_MPI ZT_DRY_RUN 2>/dev/null || true

# The #SBATCH header asks for the signal before the time limit (to this script, which relays it
# and requeues), allows the requeue, and keeps every attempt's log in one file.
for line in '#SBATCH --signal=B:USR1@120' '#SBATCH --requeue' '#SBATCH --open-mode=append'; do
  grep -qx -- "$line" "$SBATCH" || fail "slurm.sbatch lacks '$line'"
done
bash -n "$SBATCH" || fail "slurm.sbatch has a syntax error"

out=$(SLURM_JOB_ID=4242 SLURM_JOB_NUM_NODES=2 SLURM_NTASKS_PER_NODE=4 SLURM_CPUS_PER_TASK=8 \
  SLURM_JOB_NODELIST='gpu[07-08]' ZT_BIN="$BIN" bash "$SBATCH" --dry-run train --config configs/default.yaml)
cmd=$(grep -v '^#' <<<"$out")
assert_eq "$cmd" "srun --mpi=pmix --nodes=2 --ntasks=8 --ntasks-per-node=4 --cpus-per-task=8 --kill-on-bad-exit=1 $BIN train --config configs/default.yaml --resume auto" "srun command"
assert_contains "$out" "# allocation: job 4242, 2 nodes (gpu[07-08]), 4 tasks per node, 8 tasks"
assert_contains "$out" "OMP_NUM_THREADS=1"
pass "2 nodes x 4 tasks"

# ZT_DRY_RUN=1 instead of --dry-run; tasks derived from SLURM_NTASKS; '4(x2)'-style counts; pmi2;
# the interface for NCCL and MPI's TCP; default job = train with the default config.
out=$(ZT_DRY_RUN=1 SLURM_NNODES=3 SLURM_NTASKS=6 ZT_SRUN_MPI=pmi2 ZT_NET_IF=ib0 ZT_BIN="$BIN" bash "$SBATCH")
cmd=$(grep -v '^#' <<<"$out")
assert_eq "$cmd" "srun --mpi=pmi2 --nodes=3 --ntasks=6 --ntasks-per-node=2 --kill-on-bad-exit=1 $BIN train --config configs/default.yaml --resume auto" "srun command (SLURM_NTASKS)"
assert_contains "$out" "NCCL_SOCKET_IFNAME=ib0"
out=$(SLURM_JOB_NUM_NODES=2 SLURM_NTASKS_PER_NODE='4(x2)' ZT_BIN="$BIN" bash "$SBATCH" --dry-run --auto-resume train --config c.yaml)
cmd=$(grep -v '^#' <<<"$out")
assert_eq "$cmd" "$REPO/launch/auto-resume.sh -- srun --mpi=pmix --nodes=2 --ntasks=8 --ntasks-per-node=4 --kill-on-bad-exit=1 $BIN train --config c.yaml --resume auto" "srun under auto-resume"
pass "SLURM_NTASKS, ZT_DRY_RUN, pmi2, ZT_NET_IF, auto-resume"

# Every attempt of train continues its run (--resume auto) unless the command names --resume;
# other commands are left as they are.
for given in "--resume none" "--resume=runs/x/checkpoints/step_00000100"; do
  # shellcheck disable=SC2086  # the option's words
  out=$(SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=1 ZT_BIN="$BIN" bash "$SBATCH" --dry-run train --config c.yaml $given)
  assert_eq "$(grep -v '^#' <<<"$out")" "srun --mpi=pmix --nodes=1 --ntasks=1 --ntasks-per-node=1 --kill-on-bad-exit=1 $BIN train --config c.yaml $given" "train with $given"
done
out=$(SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=1 ZT_BIN="$BIN" bash "$SBATCH" --dry-run eval --config c.yaml)
assert_eq "$(grep -v '^#' <<<"$out")" "srun --mpi=pmix --nodes=1 --ntasks=1 --ntasks-per-node=1 --kill-on-bad-exit=1 $BIN eval --config c.yaml" "eval"
pass "--resume auto on train unless --resume is given"

# Outside an allocation, or with tasks that do not split evenly: a clear message and exit 2.
rc=0; err=$(bash "$SBATCH" --dry-run 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status outside an allocation"
assert_contains "$err" "not inside a Slurm allocation"
rc=0; err=$(SLURM_JOB_NUM_NODES=2 SLURM_NTASKS=5 bash "$SBATCH" --dry-run 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status with uneven tasks"
assert_contains "$err" "not a multiple of 2 nodes"
pass "errors"
