#!/bin/sh
# slow: the smoke suite against every reference model
# The reference server passes its own smoke test: as ref-good it answers every
# shipped smoke case (the strict-JSON tasks, tools, multi-turn memory in
# English and Chinese, pictures read from their PNG bytes); ref-wrong gets the
# values wrong, ref-forgetful loses the fact told mid-conversation. Its eyes
# (tests/refserver/vision.js) are checked on every shape x colour with a
# number, at three sizes, against what 'needle gen image' says it drew.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
smoke=$(fixture suites/smoke.json)
refserver_start --log "$tmp/server.log"
run() { # MODEL -> exit status in rc, folder $tmp/MODEL
	rc=0
	"$NEEDLE" run "$smoke" --base-url "$REF_URL/v1" --model "$1" --tokenizer "$ds" \
		--template deepseek-v3 --out "$tmp/$1" > "$tmp/$1.out" 2>&1 || rc=$?
}
run ref-good
[ $rc = 0 ] || fail "ref-good does not pass smoke (exit $rc): $(sed -n '/## Failures/,/## Usage/p' "$tmp/ref-good/summary.md")"
run ref-wrong
[ $rc = 1 ] || fail "ref-wrong: exit $rc"
run ref-forgetful
[ $rc = 1 ] || fail "ref-forgetful: exit $rc"
node - "$tmp" <<'JS' || fail "misbehaving models failed the wrong cases"
const fs = require('fs');
const recs = (m) => fs.readFileSync(`${process.argv[2]}/${m}/results.jsonl`, 'utf8').trim().split('\n').map(JSON.parse);
const bad = [];
for (const r of recs('ref-wrong')) {
	// the tool calls and their echoed results stay right; every value it works out is off
	const tool = r.kind === 'tool_call' && r.tool_calls.length > 0;
	if (tool !== (r.verdict === 'pass')) bad.push(`ref-wrong ${r.case}: ${r.verdict}`);
	if (!tool && !r.grade.reasons.some((x) => /expected .*, got /.test(x))) bad.push(`ref-wrong ${r.case}: ${r.grade.reasons}`);
}
for (const r of recs('ref-forgetful')) {
	const mt = r.kind === 'multi_turn';
	if (mt !== (r.verdict === 'fail')) bad.push(`ref-forgetful ${r.case}: ${r.verdict}`);
	if (mt && !r.grade.reasons.some((x) => /^missing key '(city|manager)'$/.test(x))) bad.push(`ref-forgetful ${r.case}: ${r.grade.reasons}`);
}
if (bad.length) { console.error(bad.join('\n')); process.exit(1); }
JS
objs=; i=7
for c in red blue green yellow purple orange; do
	for s in circle square triangle star hexagon diamond; do objs="$objs,$c $s:$i"; i=$((i + 13)); done
done
for size in 96 256 640; do
	"$NEEDLE" gen image --objects "${objs#,}" --size $size --out "$tmp/img$size" > /dev/null
	node -e '
const v = require(process.argv[1] + "/refserver/vision.js"), fs = require("fs");
const d = process.argv[2], m = JSON.parse(fs.readFileSync(d + "/manifest.json"));
const bad = m.images.filter((im) => {
	const r = v.look(fs.readFileSync(d + "/" + im.file));
	return r.colour !== im.colour || r.shape !== im.shape || String(r.number) !== im.label;
}).map((im) => im.text + ":" + im.label);
if (bad.length !== 0 || m.images.length !== 36) { console.error("misread:", bad.join(", ")); process.exit(1); }' "$TESTS" "$tmp/img$size" ||
		fail "vision at $size px"
done
echo "ux_refserver: ref-good passes smoke; ref-wrong and ref-forgetful fail what they should; 108 pictures read"
