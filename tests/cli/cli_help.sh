#!/bin/sh
# The command line a person expects: every help fits 80 columns and lists only
# the exit codes its command returns; "did you mean" for commands, kinds and
# options; `needle help CMD`; needle(1) and bash completion rendered from the
# same option tables; `make install PREFIX=...` installs the binary, the suites
# (found by the installed binary from any folder), the manual and completion.
set -eu
. "$TESTS/lib/cli.sh"

helps() {
	"$NEEDLE" --help
	for c in count run report diff suites; do "$NEEDLE" "$c" --help; done
	for k in haystack image cases; do "$NEEDLE" gen "$k" --help; done
}
helps > "$tmp/help"
long=$(awk 'length > 80' "$tmp/help")
[ -z "$long" ] || fail "help lines past 80 columns: $long"
grep -q -- '--version' "$tmp/help" || fail "the top-level help names --version"

"$NEEDLE" count --help > "$tmp/count"
grep -q '^  2  usage' "$tmp/count" || fail "count lists exit 2"
! grep -q '^  [13]  ' "$tmp/count" || fail "count lists an exit status it never returns"
"$NEEDLE" help count | cmp -s - "$tmp/count" || fail "'needle help count' differs from 'needle count --help'"
"$NEEDLE" help gen haystack | cmp -s - "$(
	"$NEEDLE" gen haystack --help > "$tmp/h"; echo "$tmp/h")" ||
	fail "'needle help gen haystack' differs from its --help"

expect_usage() { # expected-substring command...: exit 2 and the text on stderr
	check_exit 2 "$@"
}
expect_usage "unknown command 'reprot' (did you mean 'report'?)" "$NEEDLE" reprot
expect_usage "unknown command 'zzz'" "$NEEDLE" zzz
expect_usage "unknown kind 'imgae' (did you mean 'image'?)" "$NEEDLE" gen imgae
expect_usage "unknown option '--concurency' (did you mean '--concurrency'?)" \
	"$NEEDLE" run x.json --concurency 4
expect_usage "unknown option '--tokeniser=x' (did you mean '--tokenizer'?)" \
	"$NEEDLE" count --tokeniser=x
expect_usage "unknown option '--zzzzzz'" "$NEEDLE" count --zzzzzz

# needle(1): one section per command and kind, every option of run in it.
"$NEEDLE" man > "$tmp/needle.1"
grep -q '^\.TH NEEDLE 1' "$tmp/needle.1" || fail "man page has no .TH"
for c in count "gen haystack" "gen image" "gen cases" run report diff suites; do
	grep -q "^\.SS \"needle $c\"" "$tmp/needle.1" || fail "man page lacks 'needle $c'"
done
for o in $("$NEEDLE" run --help=words | grep -vx -- --help); do
	grep -qF -- "$(echo "$o" | sed 's/-/\\-/g')" "$tmp/needle.1" || fail "man page lacks run's $o"
done
if command -v groff > /dev/null 2>&1; then
	groff -man -Tutf8 -ww -z "$tmp/needle.1" 2> "$tmp/groff" || true
	[ ! -s "$tmp/groff" ] || fail "groff warns on needle.1: $(head -3 "$tmp/groff")"
fi

# bash completion asks the binary as you type.
if command -v bash > /dev/null 2>&1; then
	"$NEEDLE" completion bash > "$tmp/comp.bash"
	complete_words() { # words... -> COMPREPLY, one per line
		bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
			_needle; printf "%s\n" "${COMPREPLY[@]}"' x "$tmp/comp.bash" "$@"
	}
	[ "$(complete_words "$NEEDLE" rep)" = report ] || fail "bash completes 'rep' to report"
	complete_words "$NEEDLE" run --conc | grep -qx -- --concurrency ||
		fail "bash completes 'run --conc'"
	[ "$(complete_words "$NEEDLE" gen hay)" = haystack ] || fail "bash completes 'gen hay'"
	complete_words "$NEEDLE" gen haystack --tok | grep -qx -- --tokens ||
		fail "bash completes 'gen haystack --tok'"
	# an option's values, from the command's own list (report's format table)
	[ "$(complete_words "$NEEDLE" report RUN --format ju)" = junit ] ||
		fail "bash completes 'report --format ju': $(complete_words "$NEEDLE" report RUN --format ju)"
	[ "$(complete_words "$NEEDLE" diff A B --format "" | tr '\n' ' ')" = "md json html junit " ] ||
		fail "bash completes 'diff --format': $(complete_words "$NEEDLE" diff A B --format "")"
	complete_words "$NEEDLE" report --out "$tmp/" | grep -qx "$tmp/comp.bash" ||
		fail "bash completes a file after --out"
fi
# --help lists the formats from the same list; a wrong one is named with them
"$NEEDLE" report --help | grep -qF -- "--format md|json|csv|jsonl|junit|prom|vllm-bench|html" ||
	fail "report --help does not list the formats"
[ "$("$NEEDLE" report --help=values | grep -c '^--format ')" = 8 ] || fail "report --help=values: $("$NEEDLE" report --help=values)"
expect_usage "option '--format' wants md, json, csv, jsonl, junit, prom, vllm-bench or html, got 'xml'" \
	"$NEEDLE" report "$tmp" --format xml
"$NEEDLE" completion zsh | grep -q '^#compdef needle' || fail "zsh completion"
expect_usage "usage: needle completion bash|zsh" "$NEEDLE" completion fish

# make install: the installed binary finds its suites from any folder.
make -s -C "$ROOT" BUILD="$(dirname "$NEEDLE")" install PREFIX="$tmp/inst" > /dev/null
for f in bin/needle share/needle/suites/smoke.json share/man/man1/needle.1 \
	share/bash-completion/completions/needle share/zsh/site-functions/_needle; do
	[ -s "$tmp/inst/$f" ] || fail "make install did not install $f"
done
(cd / && "$tmp/inst/bin/needle" suites) > "$tmp/suites"
grep -q "^Suites in $tmp/inst/share/needle/suites" "$tmp/suites" || fail "installed suites folder: $(head -1 "$tmp/suites")"
grep -q '^  smoke  *25 cases' "$tmp/suites" || fail "'needle suites' lists smoke: $(cat "$tmp/suites")"
NEEDLE_SUITES_DIR="$tmp/none" "$NEEDLE" suites 2> "$tmp/err" && fail "a missing NEEDLE_SUITES_DIR is an error"
grep -q "NEEDLE_SUITES_DIR '$tmp/none' is not a folder" "$tmp/err" || fail "missing NEEDLE_SUITES_DIR message"
[ -s "$ROOT/LICENSE" ] || fail "no LICENSE"
[ -s "$tmp/inst/share/needle/dashboards/grafana-needle.json" ] || fail "make install did not install the Grafana dashboard"

# 'needle help man' and 'needle help completion' answer like any command's help
"$NEEDLE" help man > "$tmp/out" || fail "needle help man: exit $?"
grep -q '^usage: needle man$' "$tmp/out" || fail "needle help man: $(cat "$tmp/out")"
"$NEEDLE" help completion > "$tmp/out" || fail "needle help completion: exit $?"
grep -q '^usage: needle completion bash|zsh$' "$tmp/out" || fail "needle help completion: $(cat "$tmp/out")"
# the man page names every environment variable the code reads
"$NEEDLE" man > "$tmp/man"
sed -n '/^\.SH ENVIRONMENT/,/^\.SH EXIT STATUS/p' "$tmp/man" | sed 's/\\f[BRI]/ /g' > "$tmp/env"
vars=$(grep -rhoE 'getenv\("[A-Z_]+"\)' "$ROOT/harness" | sed 's/getenv("\(.*\)")/\1/' | sort -u)
[ -n "$vars" ] || fail "no getenv found in harness/"
for v in $vars; do
	grep -q "\b$v\b" "$tmp/env" || fail "the man page's ENVIRONMENT does not name $v"
done
# help topics are the pages of docs/, byte for byte (harness/cli/topics.h), and
# the manual's exit statuses are docs/cutover.md's list, item for item
"$NEEDLE" help topics > "$tmp/topics" || fail "needle help topics: exit $?"
for f in "$ROOT"/docs/*.md; do
	t=$(basename "$f" .md)
	grep -q "^$t " "$tmp/topics" || fail "needle help topics lacks $t: $(cat "$tmp/topics")"
	"$NEEDLE" help "$t" > "$tmp/page" || fail "needle help $t: exit $?"
	cmp -s "$tmp/page" "$f" || fail "needle help $t is not docs/$t.md"
done
"$NEEDLE" help exit-status > "$tmp/out" || fail "needle help exit-status: exit $?"
want=$(sed -n '/^## Exit statuses/,/^## /p' "$ROOT/docs/cutover.md" | grep -c '^- `[0-9]`')
[ "$want" -ge 5 ] || fail "docs/cutover.md lists $want exit statuses"
[ "$(grep -c '^- `[0-9]`' "$tmp/out")" = "$want" ] || fail "needle help exit-status: $(cat "$tmp/out")"
got=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH SEE ALSO/p' "$tmp/man" | grep -c '^\.B [0-9]$')
[ "$got" = "$want" ] || fail "the man page has $got exit statuses, docs/cutover.md $want"
grep -q '^\.B 4$' "$tmp/man" || fail "the man page lacks exit status 4"
expect_usage "unknown command 'cutoverr'" "$NEEDLE" help cutoverr
echo "cli_help: ok"
