#!/bin/sh
# The formats other tools read, fed what a server may choose (issue 33.6): a model id
# of 1,000 characters with quotes and backslashes still gives Prometheus text that
# promtool accepts, its labels whole; the run label is the same for R, R/, R/. and
# R/./; complete and incomplete never both true; the HTML page carries a Content-Security-Policy that loads nothing but its
# inline pictures and style; --repeat -1 is refused.
set -eu
. "$TESTS/lib/cli.sh"
command -v promtool >/dev/null || fail "no promtool: run 'sh tests/setup.sh consumers' (make deps-test does)"
refserver_start
cat > "$tmp/s.json" <<'JSON'
{"suite": "fmt", "cases": [{"id": "arith", "kind": "chat", "messages": [{"role": "user",
 "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}], "max_tokens": 64,
 "expect": {"json": {"answer": 437}}}]}
JSON
mkdir "$tmp/w"
cd "$tmp/w"
"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model ref-good --out R > /dev/null 2>&1 || fail "the run"
node -e 'const fs = require("fs"), long = "org/" + "m\"\\".repeat(332) + "x".repeat(4);
	const m = JSON.parse(fs.readFileSync("R/manifest.json", "utf8"));
	m.endpoint.served_model = long;
	fs.writeFileSync("R/manifest.json", JSON.stringify(m));
	const f = "R/results.jsonl";
	fs.writeFileSync(f, fs.readFileSync(f, "utf8").trim().split("\n").map(JSON.parse)
		.map((r) => JSON.stringify(Object.assign(r, {model: long}))).join("\n") + "\n")'
for r in R R/ R/. R/./; do
	"$NEEDLE" report "$r" --format prom > "$tmp/m.prom" 2> "$tmp/err" || fail "prom of '$r': $(cat "$tmp/err")"
	promtool check metrics < "$tmp/m.prom" > "$tmp/promtool.out" 2>&1 || fail "promtool ($r): $(cat "$tmp/promtool.out")"
	grep -q '^needle_attempts{run="R",' "$tmp/m.prom" || fail "the run label of '$r': $(grep -m1 needle_attempts "$tmp/m.prom" | cut -c1-200)"
done
/usr/bin/python3 - "$tmp/m.prom" <<'PY' || fail "the model label is cut: $(grep -m1 needle_attempts "$tmp/m.prom" | cut -c1-300)"
import re, sys
line = next(l for l in open(sys.argv[1], encoding="utf-8") if l.startswith("needle_attempts{"))
m = re.search(r'model="((?:[^"\\]|\\.)*)"', line)
value = re.sub(r'\\(.)', r'\1', m.group(1))
assert value == "org/" + 'm"\\' * 332 + "xxxx", value[-40:]
PY
(cd R && "$NEEDLE" report . --format prom) > "$tmp/dot.prom" 2> "$tmp/err" || fail "prom of '.': $(cat "$tmp/err")"
grep -q '^needle_attempts{run="R",' "$tmp/dot.prom" || fail "the run label of '.': $(grep -m1 needle_attempts "$tmp/dot.prom" | cut -c1-200)"
"$NEEDLE" report R --format html > "$tmp/page.html" 2> "$tmp/err" || fail "html: $(cat "$tmp/err")"
grep -qF "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">" "$tmp/page.html" ||
	fail "the page has no Content-Security-Policy: $(head -c 400 "$tmp/page.html")"
# one verdict on completeness: a manifest that says the run stopped early never
# sits beside "complete": true (issue 33.4)
cp -r R R3
node -e 'const fs = require("fs"), m = JSON.parse(fs.readFileSync("R3/manifest.json", "utf8"));
	m.interrupted = true; fs.writeFileSync("R3/manifest.json", JSON.stringify(m))'
"$NEEDLE" report R3 --format json > "$tmp/r3.json" 2> "$tmp/err" || fail "report of R3: $(cat "$tmp/err")"
node -e 'const a = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).attempts;
	process.exit(a.incomplete === true && a.complete === false ? 0 : 1)' "$tmp/r3.json" ||
	fail "complete beside incomplete: $(head -c 600 "$tmp/r3.json")"
check_exit 2 "option '--repeat' wants 1 to" "$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model ref-good --repeat -1 --out R2
[ ! -e R2 ] || fail "--repeat -1 made a run folder"
echo "hostile_formats: a 1,000-character model id exported whole; one run label for R, R/, R/.; the page's CSP; --repeat -1 refused"
