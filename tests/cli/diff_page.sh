#!/bin/sh
# needle diff --format html and --format junit (issue 32, the decision as a
# page): on load runs of the reference server, the page gives the verdict
# first, holds every cell's value, 90% interval and threshold as the JSON
# comparison has them, declares its Content-Security-Policy, loads nothing
# from elsewhere, and carries the decision picture as a PNG that decodes to
# the size report/diffplot.h gives; the JUnit XML parses (Python's XML
# parser) with one testcase per load cell and gate and one per other gate,
# failures for failed verdicts and skipped for underpowered ones, its
# counts agreeing with its testcases and with the comparison.
set -eu
. "$TESTS/lib/cli.sh"
command -v python3 > /dev/null || fail "diff_page: python3 is needed"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start --max-model-len 32768
run() { # run OUT MODEL SUITE
	rc=0
	"$NEEDLE" run "$3" --base-url "$REF_URL" --model "$2" --tokenizer "$ds" --template deepseek-v3 \
		--out "$tmp/$1" >"$tmp/$1.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { cat "$tmp/$1.out"; fail "run $1: exit $rc"; }
}
cat >"$tmp/two.json" <<'JSON'
{"suite": "two", "cases": [
 {"id": "p", "kind": "load", "temperature": 0, "load": {"input_tokens": 2000, "output_tokens": 16,
  "concurrency": [1], "requests": 12, "rounds": 3, "warmup": 0, "seed": 3}},
 {"id": "q", "kind": "load", "temperature": 0, "load": {"input_tokens": 200, "output_tokens": 16,
  "concurrency": [1], "requests": 8, "rounds": 3, "warmup": 0, "seed": 4}},
 {"id": "mul", "kind": "chat", "max_tokens": 64, "messages": [{"role": "user",
  "content": "Compute 7 * 6. Reply with only a JSON object {\"answer\": <integer>}."}], "expect": {"json": {"answer": 42}}}]}
JSON
cat >"$tmp/one.json" <<'JSON'
{"suite": "one", "cases": [{"id": "p", "kind": "load", "temperature": 0, "load": {"input_tokens": 400,
 "output_tokens": 16, "concurrency": [2], "requests": 8, "rounds": 1, "warmup": 0, "seed": 3}}]}
JSON
# TTFT 200 ms (p), TPOT 5 ms; the candidate 25% slower in both
run a 'ref-good:prefill=10000,tpot=5' "$tmp/two.json"
run a2 'ref-good:prefill=10000,tpot=5' "$tmp/two.json"
run slow 'ref-good:prefill=8000,tpot=6.25' "$tmp/two.json"
run one 'ref-good:prefill=10000,tpot=5' "$tmp/one.json"

# page.py HTML JSON WANT: the page against the comparison it shows
cat >"$tmp/page.py" <<'PY'
import base64, json, re, struct, sys, zlib
from html.parser import HTMLParser
page, comp, want = open(sys.argv[1], encoding="utf-8").read(), json.load(open(sys.argv[2])), sys.argv[3]

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.rows, self.row, self.cell, self.text = [], [], None, None, []
    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr": self.row = []
        if tag in ("td", "th"): self.cell = ""
    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.row is not None: self.row.append(self.cell); self.cell = None
        if tag == "tr": self.rows.append(self.row); self.row = None
    def handle_data(self, data):
        self.text.append(data)
        if self.cell is not None: self.cell += data
p = Page(); p.feed(page)
def bad(msg): sys.exit("page: " + msg)
# the verdict first: the heading, before any table
h1 = page.find("<h1>needle diff: " + want + "</h1>")
if h1 < 0 or h1 > page.find("<table"): bad("the verdict %s is not the first thing on the page" % want)
csp = [a for t, a in p.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
if [a.get("content") for a in csp] != ["default-src 'none'; img-src data:; style-src 'unsafe-inline'"]: bad("CSP %r" % csp)
for t, a in p.tags:
    if t in ("script", "link", "iframe", "object", "embed", "base", "form"): bad("a <%s>" % t)
    for k, v in a.items():
        if k in ("src", "href", "action", "srcset", "poster", "data") and not v.startswith("data:image/png;base64,"): bad("%s=%r" % (k, v))
if "url(" in page or "@import" in page: bad("a stylesheet reference")
# every cell's item: its row holds verdict, value, interval and threshold as the JSON has them
rows = {(r[0], r[1]): r for r in p.rows if r and len(r) == 8}
n = 0
for e in comp["load"]:
    for g in e["gates"]:
        r = rows.get((e["case"] + "/" + e["level"], g["gate"]))
        if r is None: bad("no row for %s/%s %s" % (e["case"], e["level"], g["gate"]))
        iv = "%.3f\u2013%.3f" % (g["ci_low"], g["ci_high"]) if None not in (g["ci_low"], g["ci_high"]) else "-"
        val = "%.3f" % g["value"] if g["value"] is not None else "-"
        if (r[2], r[3], r[4], r[5]) != (g["verdict"].upper(), val, iv, "%g" % g["threshold"]): bad("row %r for %r" % (r, g))
        if g["advice"] != r[7]: bad("advice %r for %r" % (r[7], g["advice"]))
        n += 1
# the picture: a PNG whose pixels decode to the size of its panels and rows
m = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
if n == 0:
    if m: bad("a picture without a gate's item")
    print(0); sys.exit(0)
if len(m) != 1: bad("%d pictures" % len(m))
png = base64.b64decode(m[0], validate=True)
if png[:8] != b"\x89PNG\r\n\x1a\n": bad("not a PNG")
pos, idat, ihdr = 8, b"", None
while pos < len(png):
    ln, typ = struct.unpack(">I4s", png[pos:pos + 8])
    body = png[pos + 8:pos + 8 + ln]
    if zlib.crc32(typ + body) != struct.unpack(">I", png[pos + 8 + ln:pos + 12 + ln])[0]: bad("bad CRC in " + str(typ))
    if typ == b"IHDR": ihdr = struct.unpack(">IIBBBBB", body)
    if typ == b"IDAT": idat += body
    pos += 12 + ln
w, h = ihdr[0], ihdr[1]
panels = len({g["gate"] for e in comp["load"] for g in e["gates"]})
cells = len(comp["load"])
bands = (panels + 2) // 3
if (w, h) != (168 + min(panels, 3) * 268 + 12, 100 + bands * (28 + cells * 18 + 28) + 8): bad("picture %dx%d" % (w, h))
if ihdr[2:4] != (8, 2) or len(zlib.decompress(idat)) != h * (1 + 3 * w): bad("the pixels do not decode")
print(n)
PY
# junit.py XML JSON: the testcases against the comparison's gates and items
cat >"$tmp/junit.py" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
root, comp = ET.parse(sys.argv[1]).getroot(), json.load(open(sys.argv[2]))
def bad(msg): sys.exit("junit: " + msg)
if root.tag != "testsuites" or len(root) != 1 or root[0].tag != "testsuite": bad("shape")
suite = root[0]
cases = suite.findall("testcase")
got = [(c.get("classname"), c.get("name"), "fail" if c.find("failure") is not None else
        "underpowered" if c.find("skipped") is not None else "pass") for c in cases]
want, rank = [], {"pass": 0, "underpowered": 1, "fail": 2}
for g in comp["gates"]:
    items = [(e, i) for e in comp["load"] for i in e["gates"] if i["gate"] == g["gate"]]
    want += [(g["gate"], e["case"] + "/" + e["level"], i["verdict"]) for e, i in items]
    if not items or rank[g["verdict"]] > max(rank[i["verdict"]] for e, i in items):
        want.append(("diff", g["gate"], g["verdict"]))
if got != want: bad("testcases %r, want %r" % (got, want))
nf, ns = sum(v == "fail" for *_, v in got), sum(v == "underpowered" for *_, v in got)
for el in (root, suite):
    if (el.get("tests"), el.get("failures"), el.get("errors")) != (str(len(got)), str(nf), "0"): bad("counts %r" % el.attrib)
if suite.get("skipped") != str(ns): bad("skipped %r" % suite.get("skipped"))
for c in cases:
    for k in ("failure", "skipped"):
        x = c.find(k)
        if x is not None and not x.get("message"): bad("a %s without its message" % k)
print(len(got), nf, ns)
PY
page() { # page A B [GATE...]: --format json, html, junit of one comparison, checked
	ra=$1 rb=$2
	shift 2
	check_exit "0 1 4" "" "$NEEDLE" diff "$tmp/$ra" "$tmp/$rb" "$@" --format json
	cp "$tmp/out" "$tmp/c.json"
	st_json=$st
	case $st_json in 0) want=PASS ;; 1) want=FAIL ;; *) want=UNDERPOWERED ;; esac
	[ $# -gt 0 ] || want="NO GATE"
	check_exit "$st_json" "" "$NEEDLE" diff "$tmp/$ra" "$tmp/$rb" "$@" --format html
	python3 "$tmp/page.py" "$tmp/out" "$tmp/c.json" "$want" >"$tmp/items" || fail "$ra $rb: the page"
	cp "$tmp/out" "$tmp/page.html"
	check_exit "$st_json" "" "$NEEDLE" diff "$tmp/$ra" "$tmp/$rb" "$@" --format junit
	cp "$tmp/out" "$tmp/j.xml"
	python3 "$tmp/junit.py" "$tmp/j.xml" "$tmp/c.json" >"$tmp/counts" || fail "$ra $rb: the JUnit XML"
	read -r tests failures skipped <"$tmp/counts"
}
# 25% slower: FAIL, first on the page; failures in the JUnit XML
page a slow --gate cutover
[ "$st_json" = 1 ] || fail "a slow: exit $st_json"
[ "$(cat "$tmp/items")" = 8 ] || fail "a slow: $(cat "$tmp/items") items on the page, want 2 cells x 4 gates"
# 2 cells x 4 gates, and goodput_ratio, slo_attainment (no SLO: no cell), no_new_failures and
# recall_delta (no recall case in either run: passes, saying so) as a whole
[ "$tests" = 12 ] && [ "$failures" -ge 4 ] || fail "a slow: $tests testcases, $failures failures"
grep -q 'classname="diff" name="no_new_failures" time="0"></testcase>' "$tmp/j.xml" ||
	fail "no_new_failures is not one passing testcase"
grep -q 'classname="ttft_p50_ratio&lt;=1.1" name="p/c1" time="0">' "$tmp/j.xml" ||
	fail "a cell's testcase: not named by its gate and cell"
grep -q 'class="verdict bad">FAIL: [0-9] of 8 gates passed, [1-9] failed' "$tmp/page.html" || fail "no count of the gates"

# the same server twice: no failure in the page or the XML
page a a2 --gate cutover
[ "$st_json" != 1 ] && [ "$failures" = 0 ] || fail "A/A: exit $st_json, $failures failures"

# one round cannot vouch for a threshold: underpowered, a skipped testcase with its advice
page one one --gate 'output_tps_ratio>=0.9'
[ "$st_json" = 4 ] && [ "$tests $failures $skipped" = "1 0 1" ] || fail "one round: exit $st_json, counts $tests $failures $skipped"
grep -q '<skipped message="B/A 1.000 on one valid round in a run' "$tmp/j.xml" || fail "the skipped testcase lacks its advice: $(cat "$tmp/j.xml")"
grep -q '<h1>needle diff: UNDERPOWERED</h1>' "$tmp/page.html" || fail "one round: not UNDERPOWERED first"

# B lacks a case of A: every gate fails as a whole, though its cells passed
page a one --gate 'success_rate>=1'
[ "$st_json" = 1 ] && grep -q '<testcase classname="diff" name="success_rate&gt;=1" time="0">' "$tmp/j.xml" &&
	grep -q 'type="fail">[^<]*B lacks 2 of A.s load cells (p/c1, q/c1)' "$tmp/j.xml" || fail "a missing cell: no failing testcase for the gate: $(cat "$tmp/j.xml")"

# no gate: a page without a decision or a picture, an empty test suite
page a a2
[ "$st_json" = 0 ] && [ "$tests" = 0 ] || fail "no gate: exit $st_json, $tests testcases"
check_exit 2 "option '--format' wants md, json, html or junit, got 'xml'" "$NEEDLE" diff "$tmp/a" "$tmp/a2" --format xml
"$NEEDLE" diff --help | grep -q -- "--format md|json|html|junit" || fail "--help does not list the formats"
echo "diff --format html: verdict first, every cell's interval and threshold, CSP, nothing external, the picture decodes; --format junit: a testcase per cell and gate, failures and skipped as the verdicts"
