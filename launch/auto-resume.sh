#!/usr/bin/env bash
# auto-resume.sh — rerun a training job until it succeeds, resuming from its latest checkpoint.
#
# Long jobs die for reasons that a restart fixes (a node reboots, a rank is OOM-killed, a network
# blip trips the comm watchdog). This loop restarts the command with `--resume auto` appended, so
# zerotrain continues from the newest checkpoint, with exponential backoff and a bound on restarts.
# It does NOT restart when a restart cannot help or is not wanted:
#   exit 1        a bad config, data or checkpoint, an unwritable checkpoint.dir, a model that does
#                 not fit (README's exit statuses): the same command would fail the same way
#   exit 2        usage error (bad flags): the same
#   exit 4        the loss became non-finite: a resume would diverge again from the same checkpoint
#   exit 130/138/143  the job was interrupted/terminated (Ctrl-C, kill, scancel; 138: a stop a
#                 launcher relayed as SIGUSR1): someone wants it stopped
# It restarts on everything else: 3 (the comm watchdog ended a hang), a rank killed by a signal
# (mpirun's 137, 134...), a launcher that failed.
#   INT/TERM/HUP/USR1 to this script: relayed to the job as SIGUSR1 (a second one as SIGTERM), then
#   this script exits with 128 + the signal it got, without restarting. SIGUSR1 because the job's
#   launcher (zt-run's mpirun, srun) would turn a SIGTERM into killing the ranks before their final
#   checkpoint, and passes SIGUSR1 on to them (core/stop_signal.h).
set -euo pipefail

PROG=$(basename "$0")

usage() {
  cat <<EOF
usage: $PROG [--max-restarts N] [--backoff S] [--max-backoff S] -- <command...>

  <command...>      the job, e.g. launch/zt-run -n 2 -- train --config configs/default.yaml
                    (restarts append '--resume auto', replacing any '--resume X' already there)
  --max-restarts N  give up after N restarts (default \$ZT_RESUME_MAX_RESTARTS or 5)
  --backoff S       seconds before the first restart, doubled each time (default \$ZT_RESUME_BACKOFF or 10)
  --max-backoff S   cap of the backoff (default 300)

exit status: the job's last status; 0 once it succeeds.
EOF
}

die() { echo "$PROG: error: $*" >&2; exit 2; }

max_restarts="${ZT_RESUME_MAX_RESTARTS:-5}" backoff="${ZT_RESUME_BACKOFF:-10}" max_backoff=300
while [[ $# -gt 0 ]]; do
  case "$1" in
    --max-restarts) [[ $# -ge 2 ]] || die "$1 needs a value"; max_restarts="$2"; shift 2 ;;
    --backoff) [[ $# -ge 2 ]] || die "$1 needs a value"; backoff="$2"; shift 2 ;;
    --max-backoff) [[ $# -ge 2 ]] || die "$1 needs a value"; max_backoff="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) usage >&2; die "unknown option '$1' (the job goes after '--')" ;;
  esac
done
[[ $# -gt 0 ]] || { usage >&2; die "missing '-- <command...>'"; }
for v in max_restarts backoff max_backoff; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "--${v//_/-} must be a non-negative integer, got '${!v}'"
done

# The restart command: the original with any '--resume X' removed and '--resume auto' appended.
resume_cmd=()
skip_next=0
for a in "$@"; do
  if [[ $skip_next -eq 1 ]]; then skip_next=0; continue; fi
  case "$a" in
    --resume) skip_next=1 ;;
    --resume=*) ;;
    *) resume_cmd+=("$a") ;;
  esac
done
resume_cmd+=(--resume auto)

# The job runs in the background and this script waits, so a signal to it is handled at once: it
# is relayed to the job (stop-relay.sh) and ends the loop.
# shellcheck source=launch/stop-relay.sh
source "$(dirname "$(readlink -f "$0")")/stop-relay.sh"
relay_message="asking the job to stop after its step (final checkpoint), not restarting"
# The status for a stop this script was asked for: the job's own when it finished anyway (0) or
# failed otherwise, else the shell's status for the signal this script got.
stopped_status() {
  case "$1" in
    0 | 1 | 2 | 3 | 4) echo "$1" ;;
    *) relay_signal_status ;;
  esac
}

attempt=0 delay="$backoff"
cmd=("$@")
while true; do
  echo "$PROG: attempt $((attempt + 1)) (restarts $attempt/$max_restarts): ${cmd[*]}" >&2
  relay_start "${cmd[@]}" <&0
  relay_wait
  rc=$relay_status
  if [[ -n "$relay_signal" ]]; then
    exit "$(stopped_status "$rc")"
  fi
  case "$rc" in
    0) echo "$PROG: job succeeded after $attempt restart(s)" >&2; exit 0 ;;
    1) echo "$PROG: job exited 1 (a bad config, data or checkpoint; see its error): not restarting" >&2; exit 1 ;;
    2) echo "$PROG: job exited 2 (usage error): not restarting, fix the command or config" >&2; exit 2 ;;
    4) echo "$PROG: job exited 4 (the loss became non-finite): not restarting, change the config" >&2; exit 4 ;;
    130 | 138 | 143) echo "$PROG: job exited $rc (interrupted/terminated): not restarting" >&2; exit "$rc" ;;
  esac
  if ((attempt >= max_restarts)); then
    echo "$PROG: job failed with exit status $rc; giving up after $max_restarts restart(s)" >&2
    exit "$rc"
  fi
  attempt=$((attempt + 1))
  echo "$PROG: job failed with exit status $rc; restart $attempt/$max_restarts with --resume auto in ${delay}s" >&2
  # sleep in the background too, so that INT/TERM during the backoff stop the loop at once
  relay_start sleep "$delay"
  relay_wait
  if [[ -n "$relay_signal" ]]; then
    exit "$(relay_signal_status)"
  fi
  delay=$((delay * 2 > max_backoff ? max_backoff : delay * 2))
  cmd=("${resume_cmd[@]}")
done
