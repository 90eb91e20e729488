#!/bin/sh
# The folders' include graph runs one way (ARCHITECTURE.md): cli -> report ->
# run -> load -> generators / net -> tpl -> jinja -> tok -> base. A project
# header a file includes lies in its own folder or in one later in that chain
# (generators and net never include each other); every back edge is listed.
set -eu
. "$TESTS/lib/cli.sh"

rank() {
	case $1 in
	cli) echo 0 ;; report) echo 1 ;; run) echo 2 ;; load) echo 3 ;;
	generators | net) echo 4 ;; tpl) echo 5 ;; jinja) echo 6 ;; tok) echo 7 ;;
	base) echo 8 ;; *) echo -1 ;;
	esac
}
# back_edges FILE...: "FILE -> HEADER" for each include against the chain
back_edges() {
	for f in "$@"; do
		from=$(basename "$(dirname "$f")")
		sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
			case $inc in */*) to=${inc%%/*} ;; *) to=$from ;; esac
			[ "$to" != "$from" ] || continue
			[ "$(rank "$to")" -gt "$(rank "$from")" ] || echo "$f -> $inc"
		done
	done
}
cd "$ROOT"
back_edges harness/*/*.c harness/*/*.cc harness/*/*.h generators/*.c generators/*.h > "$tmp/back"
[ ! -s "$tmp/back" ] || fail "includes against the folder chain: $(cat "$tmp/back")"
# the check sees what it looks for: base including tok, net including
# generators, and not tok including base
mkdir -p "$tmp/base" "$tmp/net" "$tmp/tok"
printf '#include "buf.h"\n#include "tok/uni.h"\n' > "$tmp/base/x.c"
printf '#include "generators/prng.h"\n' > "$tmp/net/x.c"
printf '#include "base/buf.h"\n' > "$tmp/tok/x.c"
[ "$(back_edges "$tmp/base/x.c" "$tmp/net/x.c" "$tmp/tok/x.c" | wc -l)" = 2 ] ||
	fail "the check does not see a back edge"
echo ok
