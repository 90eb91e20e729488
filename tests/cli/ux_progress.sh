#!/bin/sh
# The progress line fits the terminal: a run against a slow reference model
# inside an 80-column tmux pane (case ids long enough that an uncut line would
# wrap) is captured every 0.2 s; the progress line must stay on one row of at
# most 79 columns (tmux's joined capture shows a wrapped line as one longer
# line) and be refreshed in place (never two progress rows at once).
set -eu
. "$TESTS/lib/cli.sh"
command -v tmux > /dev/null || fail "tmux is missing (tests/setup.sh installs it)"
refserver_start
long=this-case-id-is-long-enough-that-an-uncut-progress-line-would-wrap-an-80-column-terminal
cat > "$tmp/slow.json" <<JSON
{"suite": "slow", "defaults": {"max_tokens": 16, "temperature": 0}, "cases": [
 {"id": "$long-1", "messages": [{"role": "user", "content": "Say OK."}], "repeat": 2},
 {"id": "$long-2", "messages": [{"role": "user", "content": "Say OK."}], "repeat": 2}]}
JSON
sock="needle-ux-$$"
tmux -L "$sock" -f /dev/null new-session -d -x 80 -y 12 -s p \
	"'$NEEDLE' run '$tmp/slow.json' --base-url '$REF_URL/v1' --model ref-slow --out '$tmp/run' --concurrency 2; echo EXIT \$?; sleep 30"
stop_tmux() { tmux -L "$sock" kill-server 2>/dev/null || true; }
i=0 seen=0
while [ $i -lt 150 ]; do
	tmux -L "$sock" capture-pane -p -J -t p > "$tmp/pane" 2>/dev/null || break
	if grep -q '^EXIT ' "$tmp/pane"; then break; fi
	rows=$(grep -c 'pass [0-9]*  fail' "$tmp/pane" || true)
	if [ "$rows" -gt 0 ]; then
		seen=$((seen + 1))
		[ "$rows" = 1 ] || { stop_tmux; fail "$rows progress rows at once: $(cat "$tmp/pane")"; }
		w=$(grep 'pass [0-9]*  fail' "$tmp/pane" | awk '{ print length($0) }')
		[ "$w" -le 79 ] || { stop_tmux; fail "progress line of $w columns: $(cat "$tmp/pane")"; }
	fi
	sleep 0.2
	i=$((i + 1))
done
tmux -L "$sock" capture-pane -p -J -t p > "$tmp/pane" 2>/dev/null || true
stop_tmux
grep -q '^EXIT 0' "$tmp/pane" || fail "the run did not end with exit 0: $(cat "$tmp/pane")"
[ $seen -ge 3 ] || fail "progress seen in only $seen captures"
! grep -q 'pass [0-9]*  fail' "$tmp/pane" || fail "the progress line was left behind: $(cat "$tmp/pane")"
echo "ux_progress: the progress line stayed on one row within 80 columns ($seen captures)"
