#!/bin/sh
# slow: Chromium, promtool, pandas and DuckDB read the outputs
# The report's outputs read by the tools that consume them: one run against
# the reference server (a chat case that passes, one that fails, a load case
# with its pre-check, a warm-up and two levels), then attempts.csv and the
# JSON Lines rows loaded by pinned pandas and DuckDB (tests/setup.sh py):
# every request has its level, round, warm-up and pre-check, text columns
# load as text, ratios as floats, run_id is the manifest's; --version and the
# manifest name the commit.
set -eu
. "$TESTS/lib/cli.sh"
py=$BUILD/venv-py/bin/python
need "the pandas/DuckDB venv at $BUILD/venv-py" "make deps-test" test -x "$py"
need promtool "make deps-test, as root" command -v promtool
need chromium "make deps-test, as root" command -v chromium
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start --max-model-len 32768
cat >"$tmp/s.json" <<'JSON'
{"suite": "consumers", "cases": [
 {"id": "arith", "kind": "chat", "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}],
  "repeat": 2, "expect": {"json": {"answer": 437}}},
 {"id": "wrong", "kind": "chat", "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}],
  "expect": {"json": {"answer": 438}}},
 {"id": "m", "kind": "load", "temperature": 0, "load": {"input_tokens": 200, "output_tokens": 8,
  "concurrency": [1, 2], "requests": [2, 4], "rounds": 1, "warmup": 1, "seed": 5}}]}
JSON
rc=0
"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model 'ref-good:prefill=100000,tpot=1' \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/smoke" >"$tmp/run.out" 2>&1 || rc=$?
[ $rc = 1 ] || { cat "$tmp/run.out"; fail "run: exit $rc (want 1: case 'wrong' fails)"; }
id_of() { node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).run_id)' "$1"; }
id=$(id_of "$tmp/smoke/manifest.json")
# a resumed run is the same run: its run_id stays
"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model 'ref-good:prefill=100000,tpot=1' \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/smoke" --resume >"$tmp/resume.out" 2>&1 || true
[ "$(id_of "$tmp/smoke/manifest.json")" = "$id" ] || fail "--resume changed the run_id: $(cat "$tmp/resume.out")"
"$NEEDLE" report "$tmp/smoke" --format jsonl >"$tmp/rows.jsonl"

# the commit: --version and the manifest say the same git describe
v=$("$NEEDLE" --version)
case "$v" in "needle "*) ;; *) fail "--version: '$v'" ;; esac
if want=$(git -C "$ROOT" describe --always --dirty 2>/dev/null); then
	[ "$v" = "needle $(echo "$v" | sed 's/^needle \([^ ]*\).*/\1/') ($want)" ] ||
		fail "--version '$v' does not name the commit '$want'"
fi

"$py" - "$tmp/smoke" "$tmp/rows.jsonl" "$v" <<'PY' || fail "pandas/DuckDB read the rows wrongly"
import json, sys
import duckdb, pandas as pd
d, jl, version = sys.argv[1:]
man = json.load(open(d + "/manifest.json"))
assert version.endswith("(%s)" % man["harness"]["commit"]) or version == "needle " + man["harness"]["commit"], (version, man["harness"])
recs = [json.loads(l) for l in open(d + "/results.jsonl")]
df = pd.read_csv(d + "/attempts.csv")
assert len(df) == len(recs) == 2 + 1 + 1 + 2 + 2 + 4, len(df)
for c in ("run", "model", "case", "kind", "verdict", "fail_stage", "failure_codes", "first_reason",
          "finish_reason", "recall_depths", "started_at", "raw", "run_id", "case_id"):
    assert df[c].dtype == object, (c, df[c].dtype)
for c in ("first_byte_ms", "ttft_ms", "ttfc_ms", "e2e_ms", "tpot_ms"):
    assert df[c].dtype == "float64", (c, df[c].dtype)
assert df["warmup"].dtype == bool and df["precheck"].dtype == bool
assert (df["run_id"] == man["run_id"]).all() and len(man["run_id"]) == 36
assert (df["case_id"] == df["case"]).all()
load = df[df["kind"] == "load"]
assert sorted(load["round"].tolist()) == [-1, 0, 0, 1, 1, 1, 1, 1, 1], load["round"].tolist()
assert (load["precheck"] == (load["round"] == -1)).all() and (load["warmup"] == (load["round"] == 0)).all()
counted = load[load["round"] >= 1].groupby("level").size().to_dict()
assert counted == {0: 2, 1: 4}, counted
assert load.groupby("level")["concurrency"].first().to_dict() == {0: 1, 1: 2}
for row, rec in zip(df.itertuples(), recs):
    assert row.started_unix_ms == rec["started_unix_ms"]
    assert rec["started_at"].startswith(pd.Timestamp(row.started_unix_ms, unit="ms").strftime("%Y-%m-%dT%H:%M"))
assert df.loc[df["case"] == "wrong", "fail_stage"].tolist() == ["grade"]
assert (df.loc[df["verdict"] == "pass", "fail_stage"] == "-").all()

con = duckdb.connect()
for name, rel in (("csv", con.read_csv(d + "/attempts.csv")), ("jsonl", con.read_json(jl))):
    types = dict(zip(rel.columns, (str(t) for t in rel.types)))
    for c in ("fail_stage", "failure_codes", "first_reason", "case_id", "verdict"):
        assert types[c] == "VARCHAR", (name, c, types[c])
    assert types["run_id"] in ("VARCHAR", "UUID"), (name, types["run_id"])
    for c in ("ttft_ms", "e2e_ms", "tpot_ms", "first_byte_ms"):
        assert types[c] == "DOUBLE", (name, c, types[c])
    assert types["warmup"] == types["precheck"] == "BOOLEAN", (name, types)
    rel.create_view("t_" + name)
    got = con.sql("select level, count(*) from t_%s where not warmup and not precheck and level is not null "
                  "group by level order by level" % name).fetchall()
    assert got == [(0, 2), (1, 4)], (name, got)
    assert con.sql("select count(distinct run_id) from t_" + name).fetchone() == (1,)
    assert con.sql("select case_id from t_%s where verdict = 'fail'" % name).fetchall() == [("wrong",)]
print("rows ok")
PY
# JUnit: Python's XML parser, the schema's shape, one testcase per attempt,
# the run's failures with their reasons
"$NEEDLE" report "$tmp/smoke" --format junit >"$tmp/junit.xml"
/usr/bin/python3 - "$tmp/smoke" "$tmp/junit.xml" <<'PY' || fail "junit: $(head -c 1500 "$tmp/junit.xml")"
import json, sys
import xml.etree.ElementTree as ET
d, path = sys.argv[1:]
recs = [json.loads(l) for l in open(d + "/results.jsonl")]
man = json.load(open(d + "/manifest.json"))
root = ET.parse(path).getroot()
assert root.tag == "testsuites" and [c.tag for c in root] == ["testsuite"], root
ts = root[0]
assert [c.tag for c in ts][0] == "properties" and all(c.tag == "testcase" for c in ts[1:])
props = {p.get("name"): p.get("value") for p in ts.find("properties")}
assert props["run_id"] == man["run_id"] and props["harness_commit"] == man["harness"]["commit"], props
cases = ts.findall("testcase")
assert len(cases) == len(recs) and int(ts.get("tests")) == int(root.get("tests")) == len(recs)
assert len({(c.get("classname"), c.get("name")) for c in cases}) == len(cases), "testcase names repeat"
failed = [c for c in cases if c.find("failure") is not None]
want = [r for r in recs if r["verdict"] == "fail"]
assert int(ts.get("failures")) == len(failed) == len(want) == 1, (ts.get("failures"), len(failed), len(want))
f = failed[0].find("failure")
assert failed[0].get("classname") == "consumers.wrong" and f.get("type") == "grade"
assert f.get("message") == want[0]["grade"]["reasons"][0] and want[0]["grade"]["reasons"][0] in f.text, f.attrib
for c in cases:
    assert all(x.tag == "failure" for x in c) and float(c.get("time")) >= 0
    assert set(c.attrib) == {"classname", "name", "time"}
assert sum(" pre-check" in c.get("name") for c in cases) == 1
PY

# Prometheus: promtool accepts the text; the pass ratio is the records'; the
# load levels are there; the shipped Grafana dashboard has the shape Grafana
# imports and queries only metrics needle writes
"$NEEDLE" report "$tmp/smoke" --format prom >"$tmp/m.prom"
promtool check metrics <"$tmp/m.prom" >"$tmp/promtool.out" 2>&1 || fail "promtool: $(cat "$tmp/promtool.out")"
/usr/bin/python3 - "$tmp/smoke" "$tmp/m.prom" "$ROOT/dashboards/grafana-needle.json" <<'PY' || fail "prom: $(head -c 1500 "$tmp/m.prom")"
import json, re, sys
d, path, dash_path = sys.argv[1:]
recs = [json.loads(l) for l in open(d + "/results.jsonl")]
man = json.load(open(d + "/manifest.json"))
samples = {}
for line in open(path):
    if line.startswith("#"):
        continue
    m = re.fullmatch(r'([a-z0-9_]+)\{(.*)\} (\S+)\n', line)
    assert m, line
    labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2)))
    samples.setdefault(m.group(1), []).append((labels, float(m.group(3))))
for name, rows in samples.items():
    for labels, _ in rows:
        assert labels["run_id"] == man["run_id"] and labels["suite"] == "consumers" and labels["run"] == "smoke", labels
        assert labels["model"] == man["endpoint"]["served_model"], labels
(ratio,) = [v for _, v in samples["needle_pass_ratio"]]
assert abs(ratio - sum(r["verdict"] == "pass" for r in recs) / len(recs)) < 1e-12, ratio
tput = {l["concurrency"]: v for l, v in samples["needle_load_output_throughput_tokens_per_second"]}
assert set(tput) == {"1", "2"} and all(v > 0 for v in tput.values()), tput
assert {l["case"]: v for l, v in samples["needle_case_pass_ratio"]} == {"arith": 1, "wrong": 0, "m": 1}
dash = json.load(open(dash_path))
assert isinstance(dash["title"], str) and isinstance(dash["uid"], str) and isinstance(dash["schemaVersion"], int)
names = {v["name"] for v in dash["templating"]["list"]}
ids = [p["id"] for p in dash["panels"]]
assert len(ids) == len(set(ids)) and dash["panels"]
used = set()
for p in dash["panels"]:
    assert p["type"] in ("timeseries", "stat", "table", "gauge", "barchart"), p["type"]
    assert set(p["gridPos"]) == {"x", "y", "w", "h"} and p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
    assert p["datasource"]["type"] == "prometheus" and p["targets"]
    for t in p["targets"]:
        used |= set(re.findall(r"needle_[a-z0-9_]+", t["expr"]))
        assert set(re.findall(r"\$(\w+)", t["expr"])) <= names, t["expr"]
assert used and used <= set(samples), used - set(samples)
PY

# vllm-bench: vllm bench serve's keys for every load level, the figures as
# numpy computes them from the records (serve.py's calculate_metrics)
"$NEEDLE" report "$tmp/smoke" --format vllm-bench >"$tmp/vb.jsonl"
"$py" - "$tmp/smoke" "$tmp/vb.jsonl" <<'PY' || fail "vllm-bench: $(head -c 1500 "$tmp/vb.jsonl")"
import json, sys
import numpy as np
d, path = sys.argv[1:]
recs = [json.loads(l) for l in open(d + "/results.jsonl")]
rows = [json.loads(l) for l in open(path)]
keys = ["date", "endpoint_type", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate",
        "max_concurrency", "duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
        "request_throughput", "request_goodput", "output_throughput", "total_token_throughput"]
for m in ("ttft", "tpot", "itl", "e2el"):
    keys += ["mean_%s_ms" % m, "median_%s_ms" % m, "std_%s_ms" % m] + ["p%d_%s_ms" % (p, m) for p in (50, 90, 95, 99)]
assert [(r["needle_case"], r["needle_level"], r["max_concurrency"]) for r in rows] == [("m", 0, 1), ("m", 1, 2)], rows
def close(a, b):
    assert abs(a - b) <= 1e-9 * max(1.0, abs(b)), (a, b)
for row in rows:
    assert all(k in row for k in keys), [k for k in keys if k not in row]
    assert row["request_rate"] == "inf" and row["endpoint_type"] == "openai"
    reqs = [r for r in recs if "load" in r and r["load"]["level"] == row["needle_level"] and r["load"]["round"] >= 1]
    ok = [r for r in reqs if r["verdict"] == "pass"]
    assert row["num_prompts"] == len(reqs) and row["completed"] == len(ok) and row["failed"] == len(reqs) - len(ok)
    dur = 0
    for rnd in {r["load"]["round"] for r in reqs}:
        rr = [r for r in reqs if r["load"]["round"] == rnd]
        dur += max(r["load"]["sent_ms"] + r["timing"]["e2e_ms"] for r in rr) - min(r["load"]["scheduled_ms"] for r in rr)
    close(row["duration"], dur / 1000)
    out = sum(r["usage"]["completion_tokens"] for r in ok)
    inp = sum(r["usage"]["prompt_tokens"] for r in ok)
    assert row["total_output_tokens"] == out and row["total_input_tokens"] == inp
    close(row["output_throughput"], out / (dur / 1000))
    close(row["total_token_throughput"], (inp + out) / (dur / 1000))
    close(row["request_throughput"], len(ok) / (dur / 1000))
    ttft = np.array([r["timing"]["ttft_ms"] for r in ok])
    e2e = np.array([r["timing"]["e2e_ms"] for r in ok])
    tpot = np.array([(r["timing"]["e2e_ms"] - r["timing"]["ttft_ms"]) / (r["usage"]["completion_tokens"] - 1)
                     for r in ok if r["usage"]["completion_tokens"] > 1])
    itl = np.array([g for r in ok for g in r["load"]["itl_ms"]])
    assert len(itl) == sum(r["usage"]["completion_tokens"] - 1 for r in ok), len(itl)
    for name, v in (("ttft", ttft), ("tpot", tpot), ("itl", itl), ("e2el", e2e)):
        close(row["mean_%s_ms" % name], np.mean(v))
        close(row["median_%s_ms" % name], np.median(v))
        close(row["std_%s_ms" % name], np.std(v))
        for p in (50, 90, 95, 99):
            close(row["p%d_%s_ms" % (p, name)], np.percentile(v, p))
PY

# HTML: one page with tables and the pictures inline, referring to nothing
# outside itself; headless Chromium renders it to a screenshot
"$NEEDLE" report "$tmp/smoke" --format html >"$tmp/report.html"
/usr/bin/python3 - "$tmp/smoke" "$tmp/report.html" <<'PY' || fail "html: $(head -c 1500 "$tmp/report.html")"
import base64, re, sys
from html.parser import HTMLParser
d, path = sys.argv[1:]
page = open(path, encoding="utf-8").read()
class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.refs, self.imgs = [], [], []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            if k in ("src", "href", "action", "srcset", "poster", "data", "formaction", "background"):
                self.refs.append((tag, k, v))
            if tag == "img" and k == "src":
                self.imgs.append(v)
p = Page()
p.feed(page)
p.close()
assert not {"script", "link", "iframe", "object", "embed", "base"} & set(p.tags), set(p.tags)
assert all(v.startswith("data:") for _, k, v in p.refs if k != "href") and \
    all(v.startswith("#") for _, k, v in p.refs if k == "href"), p.refs
assert not re.search(r"url\(|@import", page), "a stylesheet reference"
assert p.tags.count("table") >= 4, p.tags.count("table")
assert len(p.imgs) == 1 and p.imgs[0].startswith("data:image/png;base64,"), [i[:40] for i in p.imgs]
assert base64.b64decode(p.imgs[0].split(",", 1)[1]) == open(d + "/load.png", "rb").read(), "the inline picture is not load.png"
assert "wrong" in page and "expected integer 438" in page
PY
rc=0
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-extensions --disable-sync --no-first-run --host-resolver-rules='MAP * ~NOTFOUND' \
	--user-data-dir="$tmp/chromium" --window-size=1280,2400 --screenshot="$tmp/shot.png" \
	"file://$tmp/report.html" >"$tmp/chromium.out" 2>&1 || rc=$?
[ $rc = 0 ] || fail "chromium: exit $rc: $(tail -5 "$tmp/chromium.out")"
/usr/bin/python3 - "$tmp/shot.png" <<'PY' || fail "the screenshot is not a rendered page"
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", b[16:24])
assert (w, h) == (1280, 2400), (w, h)
# a blank page compresses to a few kB; tables, text and the picture do not
assert len(b) > 40000, len(b)
PY

echo "report_consumers: HTML self-contained and rendered by Chromium; vllm-bench keys for every level, numpy's figures; promtool accepts the metrics, the dashboard reads them; JUnit parses with one testcase per attempt and the run's failures; rows typed and grouped for pandas and DuckDB; --version and the manifest name the commit"
