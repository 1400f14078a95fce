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
