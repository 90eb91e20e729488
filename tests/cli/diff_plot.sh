#!/bin/sh
# Issue 21, the diff picture: `needle diff A B --plot FILE` draws the comparison's
# load cells (diff JSON "load", one entry per case and level) into a PNG sized for
# its cases (report/diffplot.h: 1116 px wide, 100 + 240 per case + 8 high); runs
# without load cells get a warning and no file. The pixels are checked in
# tests/unit/test_diffplot.c.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start
cat >"$tmp/load.json" <<'JSON'
{"suite": "plot", "cases": [{"id": "m", "kind": "load", "temperature": 0, "load": {"input_tokens": 64,
 "output_tokens": 8, "concurrency": [1, 2], "requests": [2, 4], "rounds": 2, "warmup": 0, "seed": 5}}]}
JSON
cat >"$tmp/chat.json" <<'JSON'
{"suite": "chat", "cases": [{"id": "mul", "kind": "chat", "max_tokens": 64, "messages": [{"role": "user",
 "content": "Compute 7 * 6. Reply with only a JSON object {\"answer\": <integer>}."}], "expect": {"json": {"answer": 42}}}]}
JSON
for r in a:ref-good:tpot=2 b:ref-good:tpot=4; do
	check_exit 0 "" "$NEEDLE" run "$tmp/load.json" --base-url "$REF_URL/v1" --model "${r#*:}" \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/${r%%:*}"
done
check_exit 0 "" "$NEEDLE" diff "$tmp/a" "$tmp/b" --format json --plot "$tmp/d.png"
cp "$tmp/out" "$tmp/d.json"
# Whatever load entries the diff has are drawn: one row for the one case.
node -e 'const fs = require("fs"), [json, png] = process.argv.slice(1);
	const d = JSON.parse(fs.readFileSync(json, "utf8"));
	const cells = Array.isArray(d.load) ? d.load.filter((e) => typeof e.case === "string") : [];
	if (!cells.length) {
		if (fs.existsSync(png)) throw new Error("a picture without load entries");
		process.exit(0);
	}
	const b = fs.readFileSync(png);
	if (b.toString("latin1", 1, 4) !== "PNG" || b.toString("latin1", 12, 16) !== "IHDR")
		throw new Error("not a PNG");
	const w = b.readUInt32BE(16), h = b.readUInt32BE(20);
	if (w !== 1116 || h !== 100 + 240 + 8) throw new Error(`size ${w}x${h}`);' \
	"$tmp/d.json" "$tmp/d.png" || fail "--plot: the picture does not match the diff's load entries"
if [ ! -f "$tmp/d.png" ]; then
	grep -q "warning: no load cell in either run: '$tmp/d.png' not written" "$tmp/err" ||
		fail "--plot without load entries: no warning: $(cat "$tmp/err")"
fi

# Runs without load cells: a warning, no file, the comparison as usual.
for r in c d; do
	check_exit 0 "" "$NEEDLE" run "$tmp/chat.json" --base-url "$REF_URL/v1" --model ref-good --out "$tmp/$r"
done
check_exit 0 "warning: no load cell in either run: '$tmp/none.png' not written" \
	"$NEEDLE" diff "$tmp/c" "$tmp/d" --plot "$tmp/none.png"
[ ! -e "$tmp/none.png" ] || fail "a picture of runs without load cells"
grep -q '^# needle diff' "$tmp/out" || fail "--plot lost the comparison: $(cat "$tmp/out")"
check_exit 2 "" "$NEEDLE" diff "$tmp/c" "$tmp/d" --plot
echo "diff --plot: the load entries drawn in a PNG of their size; none: a warning and no file"
