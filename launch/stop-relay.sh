# shellcheck shell=bash
# stop-relay.sh — sourced by zt-run, auto-resume.sh and slurm.sbatch: how a stop signal sent to a
# launch script reaches the ranks.
#
# mpirun and srun, sent SIGINT or SIGTERM themselves, kill the ranks within a second (mpirun) or at
# once (srun): too soon for a final checkpoint. Both pass SIGUSR1 on to every rank untouched, and
# the ranks take it as a stop request (core/stop_signal.h). So a launch script runs its job in the
# background, catches INT, TERM, HUP and USR1, and relays the first as SIGUSR1; a second one, a
# second or more later, as SIGTERM (the user insists). Copies of one signal that arrive together
# count once: `timeout -s INT` and a terminal's Ctrl-C signal the whole process group, so a script
# and its parent or child may each get the same signal.
#
# Use: relay_start CMD... (runs it in the background), then relay_wait; relay_signal names the
# first signal caught ("" if none), relay_status is the job's exit status.

relay_signal="" relay_child="" relay_caught=0 relay_first_ns=0 relay_status=0
relay_message="asking the job to stop after its step and write a final checkpoint (again to kill it)"

relay_on() {
  local now
  now=$(date +%s%N) || now=0
  relay_caught=1
  # The relay first, then the message: stderr may be a pipe whose reader died of the same Ctrl-C,
  # or a terminal gone with a hang-up; the message must not end this script before the relay.
  trap '' PIPE
  if [[ -z "$relay_signal" ]]; then
    relay_signal=$1 relay_first_ns=$now
    [[ -z "$relay_child" ]] || kill -USR1 "$relay_child" 2>/dev/null || true
    echo "${PROG:-launch}: got SIG$1: $relay_message" >&2 || true
  elif ((now - relay_first_ns >= 1000000000)); then
    [[ -z "$relay_child" ]] || kill -TERM "$relay_child" 2>/dev/null || true
  fi
}

for relay_sig in INT TERM HUP USR1; do
  # shellcheck disable=SC2064  # the signal's name is fixed now
  trap "relay_on $relay_sig" "$relay_sig"
done
unset relay_sig

# relay_start CMD...: the job in the background (with this function's stdin, which a background
# job would otherwise lose). Not started when a stop was asked for already: a job signalled before
# it can catch the signal would only die of it.
relay_start() {
  [[ -z "$relay_signal" ]] || return 0
  "$@" <&0 &
  relay_child=$!
}

# relay_wait: until the job ends; its status in relay_status (the stop's status if it never started).
relay_wait() {
  if [[ -z "$relay_child" ]]; then
    relay_status=$(relay_signal_status)
    return 0
  fi
  while :; do
    relay_caught=0 relay_status=0
    wait "$relay_child" || relay_status=$?
    [[ $relay_caught -eq 1 ]] || break
    # A trapped signal ended `wait` early (status 128 + signal), or came after the job ended.
    if kill -0 "$relay_child" 2>/dev/null; then continue; fi
    local again=0
    wait "$relay_child" 2>/dev/null || again=$?
    [[ $again -eq 127 ]] || relay_status=$again
    break
  done
  relay_child=""
}

# The shell's exit status for the signal caught (130 for INT, 143 for TERM).
relay_signal_status() { echo $((128 + $(kill -l "$relay_signal"))); }

# The script's exit status: ranks that stopped on the relayed request exit 138 (128 + SIGUSR1);
# the caller asked with its own signal and gets the shell's status for it. 0 (the last step came
# first) and any other failure are reported as they are.
relay_exit_status() {
  if [[ -n "$relay_signal" && $relay_status -eq 138 ]]; then relay_signal_status; else echo "$relay_status"; fi
}
