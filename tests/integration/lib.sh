# Shared helpers for shell integration tests (sourced).
# Exit protocol: 0 pass, 77 skip, 99 hard error, anything else failure.
set -eu
: "${PYTHON_SB:?PYTHON_SB not set (run through make check)}"
: "${SB_PYTHON:=/usr/bin/python3}"

sb_skip() { echo "SKIP: $*"; exit 77; }
sb_fail() { echo "FAIL: $*" >&2; exit 1; }
sb_hard() { echo "ERROR: $*" >&2; exit 99; }

sb_scratch() {
	SB_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/sbtest-XXXXXX")
	trap 'rm -rf "$SB_SCRATCH"' EXIT
	cd "$SB_SCRATCH"
}

# sb_run ARGS... : run python-sb with the test interpreter; output in $SB_OUT/$SB_ERR, status in $SB_RC.
sb_run() {
	SB_OUT=$SB_SCRATCH/.out SB_ERR=$SB_SCRATCH/.err
	set +e
	"$PYTHON_SB" --python="$SB_PYTHON" "$@" >"$SB_OUT" 2>"$SB_ERR"
	SB_RC=$?
	set -e
}

sb_expect_rc() { [ "$SB_RC" -eq "$1" ] || { cat "$SB_ERR" >&2; sb_fail "exit status $SB_RC, expected $1"; }; }
sb_expect_out() { grep -q -- "$1" "$SB_OUT" || { cat "$SB_OUT" >&2; sb_fail "stdout lacks '$1'"; }; }
sb_expect_err() { grep -q -- "$1" "$SB_ERR" || { cat "$SB_ERR" >&2; sb_fail "stderr lacks '$1'"; }; }
sb_expect_no_out() { ! grep -q -- "$1" "$SB_OUT" || sb_fail "stdout has '$1'"; }
