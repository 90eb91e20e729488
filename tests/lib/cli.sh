# The shell library of the CLI tests (tests/cli/*.sh), the bench and the demo;
# POSIX sh, sourced: . "$TESTS/lib/cli.sh"
# Needs TESTS (the tests directory); NEEDLE and BUILD default to build/ of the
# repository. Sourcing sets ROOT (the repository) and tmp (a new temporary
# directory), and installs an EXIT trap that stops every process started or
# tracked here and removes tmp (a script must not set its own EXIT trap).
#   fail MESSAGE...            prints "FAIL: MESSAGE" on stderr, exits 1
#   fixture NAME               absolute path of a test input (tests/lib/fixture.js);
#                              fails when it does not exist
#   track PID                  stops PID at exit (a process the script started)
#   serve CMD...               starts CMD, a loopback server that prints
#                              "... listening on URL" first; sets SERVE_URL and
#                              SERVE_PID, and tracks it; returns 1 (message on
#                              stderr) when it does not start
#   refserver_start [OPT...]   serve the reference server (tests/refserver/server.js
#                              --port 0 OPT...); sets REF_URL and REF_PID
#   refserver_stop             stops the last one started (its pid only)
#   fake_server SCRIPT [ARG...] serve a scripted server written on
#                              tests/lib/fake_server.js; sets FAKE_URL
#   check_exit CODES WANT CMD...  runs CMD (stdout in $tmp/out, stderr in
#                              $tmp/err); fails unless its exit status is one of
#                              CODES ("2", "0 2") and, WANT not empty, stderr
#                              holds WANT; sets st
#   check_one_line WHAT        $tmp/err is one line besides a "try ..." hint
#   check_no_stdout WHAT       $tmp/out is empty
#   need WHAT HOW CHECK...     runs CHECK (e.g. command -v chromium); when it
#                              fails, prints "skip: needs WHAT (HOW)" and exits
#                              77, which tests/run.sh counts as skipped (as
#                              failed under CI=true). For optional tools only:
#                              what `make demo` installs is required, not needed
: "${TESTS:?TESTS must name the tests directory}"
ROOT=$(cd "$TESTS/.." && pwd)
TESTS=$ROOT/tests
NEEDLE=${NEEDLE:-$ROOT/build/needle}
BUILD=${BUILD:-$ROOT/build}
export TESTS NEEDLE BUILD
tmp=$(mktemp -d)
_lib_pids=
_lib_servers=0

lib_cleanup() {
	for _p in $_lib_pids; do
		kill "$_p" 2>/dev/null || true
	done
	for _p in $_lib_pids; do
		wait "$_p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap lib_cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# NAME is hf/MODEL[/FILE], suites/FILE or a path under fixtures/: the rule is
# tests/lib/fixture.js's, the one the JS tests use.
fixture() {
	node "$TESTS/lib/fixture.js" "$1" || exit 1
}

track() {
	_lib_pids="$_lib_pids $1"
}

serve() {
	_lib_servers=$((_lib_servers + 1))
	_out=$tmp/.server$_lib_servers
	: > "$_out"
	"$@" > "$_out" 2> "$_out.err" &
	SERVE_PID=$!
	track "$SERVE_PID"
	SERVE_URL=
	_i=0
	while [ $_i -lt 600 ]; do
		SERVE_URL=$(sed -n '1s/.* listening on //p' "$_out")
		[ -n "$SERVE_URL" ] && break
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.05
		_i=$((_i + 1))
	done
	[ -n "$SERVE_URL" ] && return 0
	echo "FAIL: server '$*' did not start: $(cat "$_out.err")" >&2
	return 1
}

refserver_start() {
	serve node "$TESTS/refserver/server.js" --port 0 "$@" || return 1
	REF_URL=$SERVE_URL
	REF_PID=$SERVE_PID
}

refserver_stop() {
	if [ -n "${REF_PID:-}" ]; then
		kill "$REF_PID" 2>/dev/null || true
		wait "$REF_PID" 2>/dev/null || true
		REF_PID=
	fi
}

fake_server() {
	serve node "$@" || return 1
	FAKE_URL=$SERVE_URL
}

check_exit() {
	_codes=$1 _want=$2
	shift 2
	st=0
	"$@" > "$tmp/out" 2> "$tmp/err" || st=$?
	case " $_codes " in
	*" $st "*) ;;
	*) fail "$*: exit $st, expected $_codes: $(cat "$tmp/err")" ;;
	esac
	[ -z "$_want" ] || grep -qF -- "$_want" "$tmp/err" ||
		fail "$*: stderr lacks '$_want': $(cat "$tmp/err")"
}

need() {
	_what=$1 _how=$2
	shift 2
	"$@" > /dev/null 2>&1 && return 0
	echo "skip: needs $_what ($_how)"
	exit 77
}

check_one_line() {
	[ "$(grep -vc '^try ' "$tmp/err")" = 1 ] || fail "$1: not one line: $(cat "$tmp/err")"
}

check_no_stdout() {
	[ ! -s "$tmp/out" ] || fail "$1: printed to stdout: $(cat "$tmp/out")"
}

# cutover_small NAME OUTPUT_TOKENS REQUESTS_C1 REQUESTS_C8 > FILE: the first
# two load cases of the shipped cutover suite shrunk for a loopback server
# (a quarter of the prompt, C1 and C8, three rounds after a warm-up).
cutover_small() {
	node -e '
const [file, name, out, r1, r8] = process.argv.slice(1);
const s = JSON.parse(require("fs").readFileSync(file, "utf8"));
const cases = s.cases.filter(c => c.kind === "load").slice(0, 2);
for (const c of cases)
	Object.assign(c.load, { input_tokens: c.load.input_tokens / 4, output_tokens: Number(out),
		concurrency: [1, 8], requests: [Number(r1), Number(r8)], rounds: 3, warmup: 1 });
process.stdout.write(JSON.stringify({ suite: name, cases }));' "$(fixture suites/cutover.json)" "$@"
}
