# shellcheck shell=bash
# Shared helpers of the launch tests (sourced). Each test gets a private temp dir, removed on exit.
set -euo pipefail
TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/zt-$TEST_NAME.XXXXXX")
trap 'rm -rf -- "$TMP"' EXIT

fail() { echo "FAIL ($TEST_NAME): $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
# assert_contains HAYSTACK NEEDLE [what]
assert_contains() {
  [[ "$1" == *"$2"* ]] || fail "${3:-output} does not contain '$2'; it was:"$'\n'"$1"
}
assert_not_contains() {
  [[ "$1" != *"$2"* ]] || fail "${3:-output} contains '$2' but must not; it was:"$'\n'"$1"
}
assert_eq() {
  [[ "$1" == "$2" ]] || fail "${3:-value}: expected '$2', got '$1'"
}
# require_netns HARNESS: exits 77 (CTest skip, with the harness's reason) where network namespaces
# cannot be made here, and fails the test when the harness's check fails any other way.
require_netns() {
  local rc=0 reason
  reason=$("$1" check 2>&1) || rc=$?
  if [[ $rc -eq 77 ]]; then echo "SKIP: $reason"; exit 77; fi
  [[ $rc -eq 0 ]] || fail "netns-hosts.sh check exited $rc: $reason"
}
assert_at_most() { (($1 <= $2)) || fail "${3:-value}: $1 is more than $2"; }
