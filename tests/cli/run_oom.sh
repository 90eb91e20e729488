#!/bin/sh
# slow: fails each allocation in turn
# `needle run` under allocation failure (harness/base/mem.c: NEEDLE_FAIL_ALLOC=N fails the
# Nth allocation and all after it) against the reference server, in three sweeps:
#   plain   chat cases (one repeated, one graded wrong), a /v1/completions prompt and a
#           two-round tool call at --concurrency 2, no audit: under ASan/UBSan with
#           leak detection when that build exists;
#   resume  --resume of a folder holding the first 2 of those 5 records, the same
#           build; the 2 records stay byte for byte;
#   errframe, http500  a repeated chat case against a server that sends an error frame
#           mid-stream / answers HTTP 500 (failures recorded), the same build;
#   audit   a 2,048-token recall case and two audited cases (DeepSeek V3 tokenizer.json
#           and template), about 5,000 allocations, most of them loading the tokenizer
#           and generating filler (both swept on their own by oom.sh and
#           gen_haystack_bad.sh), with the plain build (ASan would take minutes).
# Each sweep finds the run's allocation count by bisection, then tries every N of
# the first and last few dozen (hundred, for audit) and an even spread between:
# cJSON allocates through mem too, so every N of a run is thousands of runs.
# Every N must end in exit 2 with "out of memory" on stderr, or in the unhindered run's
# exit with its verdicts (a summary that could not be written is a warning); never a
# signal or a sanitizer report. Whatever is left in the results folder is whole
# (run_oom.js): results.jsonl lines, manifest.json, summary.json, recall.png, and no
# temporary file.
set -eu
. "$TESTS/lib/cli.sh"
asan=$BUILD/asan/needle
[ -x "$asan" ] || asan=$NEEDLE
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
refserver_start
ds=$(fixture hf/deepseek_v3/tokenizer.json)

ask='Reply with only a JSON object {\"answer\": <integer>}.'
cat > "$tmp/plain.json" <<JSON
{"suite": "oom", "defaults": {"max_tokens": 64}, "cases": [
 {"id": "arith", "repeat": 2, "messages": [{"role": "system", "content": "You are terse."},
  {"role": "user", "content": "Compute 19 * 23. $ask"}], "expect": {"json": {"answer": 437}}},
 {"id": "raw", "prompt": "Compute 7 * 8. $ask", "expect": {"json": {"answer": 56}}},
 {"id": "weather", "kind": "tool_call", "max_tokens": 512,
  "messages": [{"role": "user", "content": "What is the weather in Nairobi right now? Use celsius. Tell me the report id."}],
  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city.",
   "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"]}}}],
  "expect": {"tool_call": {"name": "get_weather", "arguments": {"city": "Nairobi", "unit": "celsius"}},
   "tool_result": "{\"city\":\"Nairobi\",\"report_id\":\"WX-TF8AVZ\"}", "final_contains": ["WX-TF8AVZ"]}},
 {"id": "wrong", "messages": [{"role": "user", "content": "Compute 2 * 3. $ask"}], "expect": {"json": {"answer": 7}}}]}
JSON
cat > "$tmp/audit.json" <<JSON
{"suite": "oom-audit", "defaults": {"max_tokens": 64}, "cases": [
 {"id": "r", "kind": "recall", "max_tokens": 256, "recall": {"tokens": 2048, "depths": [10, 50, 90], "seeds": [1]}},
 {"id": "arith", "messages": [{"role": "user", "content": "Compute 19 * 23. $ask"}], "expect": {"json": {"answer": 437}}},
 {"id": "raw", "prompt": "Compute 7 * 8. $ask", "expect": {"json": {"answer": 56}}}]}
JSON
cat > "$tmp/one.json" <<JSON
{"suite": "oom-faults", "cases": [{"id": "arith", "repeat": 2, "max_tokens": 64,
 "messages": [{"role": "user", "content": "Compute 19 * 23. $ask"}], "expect": {"json": {"answer": 437}}}]}
JSON
plain="run $tmp/plain.json --base-url $REF_URL/v1 --model ref-good --concurrency 2 --timeout 20"
audit="run $tmp/audit.json --base-url $REF_URL/v1 --model ref-good --timeout 20 --tokenizer $ds --template deepseek-v3"

# baseline NAME BIN ARGS...: the unhindered run, in $tmp/NAME.base (exit in its file 'exit').
baseline() {
	name=$1 bin=$2
	shift 2
	rc=0
	"$bin" "$@" --out "$tmp/$name.base" > /dev/null 2> "$tmp/$name.base.err" || rc=$?
	[ "$rc" -le 1 ] || fail "$name: unhindered run exit $rc: $(cat "$tmp/$name.base.err")"
	echo "$rc" > "$tmp/$name.base/exit"
}

# one NAME N BIN ARGS...: the run with the Nth allocation failing, into $tmp/NAME/N
# (copied from $tmp/NAME.start first when that exists); appends "N EXIT DIR" to
# $tmp/NAME.list. A signal, a sanitizer report, an exit other than 2 and the
# baseline's, or exit 2 without the message is a failure: one line in $tmp/failures
# (the sweep goes on, so that the test names every bad N). Sets clean when the run
# needed no failing allocation (the baseline's exit, no message).
one() {
	name=$1 n=$2 bin=$3
	shift 3
	dir=$tmp/$name/$n
	mkdir -p "$tmp/$name"
	[ ! -d "$tmp/$name.start" ] || cp -R "$tmp/$name.start" "$dir"
	rc=0
	NEEDLE_FAIL_ALLOC=$n "$bin" "$@" --out "$dir" > /dev/null 2> "$dir.err" || rc=$?
	echo "$n $rc $dir" >> "$tmp/$name.list"
	clean=0
	why=
	if grep -q 'Sanitizer\|runtime error' "$dir.err"; then
		why="sanitizer report: $(grep -m 3 'ERROR\|SUMMARY\|runtime error\|#[0-9] ' "$dir.err" | tr '\n' ' ')"
	elif [ "$rc" = 2 ]; then
		grep -q 'out of memory' "$dir.err" || why="exit 2 without 'out of memory': $(grep -v '^needle run' "$dir.err" | tr '\n' ' ')"
	elif [ "$rc" = "$(cat "$tmp/$name.base/exit")" ]; then
		grep -q 'out of memory' "$dir.err" || clean=1
	else
		why="exit $rc: $(head -5 "$dir.err" | tr '\n' ' ')"
	fi
	[ -z "$why" ] || echo "$name: NEEDLE_FAIL_ALLOC=$n: $why" | tee -a "$tmp/failures" >&2
}

# total NAME BIN ARGS...: how many allocations the run makes (by bisection: the
# smallest N whose run needs no failing allocation), in $total.
total() {
	name=$1 bin=$2
	shift 2
	lo=1 hi=200000
	while [ $((hi - lo)) -gt 1 ]; do
		mid=$(((lo + hi) / 2))
		rc=0
		rm -rf "$tmp/probe"
		NEEDLE_FAIL_ALLOC=$mid "$bin" "$@" --out "$tmp/probe" > /dev/null 2> "$tmp/probe.err" || rc=$?
		if [ "$rc" != 2 ] && ! grep -q 'out of memory' "$tmp/probe.err"; then hi=$mid; else lo=$mid; fi
	done
	total=$hi
}

# sweep NAME EDGE SPREAD BIN ARGS...: every N of the first and the last EDGE
# allocations and SPREAD more spread evenly between (every N when that is
# fewer), and 5 past the total, which must need no failing allocation.
sweep() {
	name=$1 edge=$2 spread=$3
	shift 3
	total "$name" "$@"
	[ $total -gt 20 ] || fail "$name: only $total allocations: the hook is off"
	step=$(((total - 2 * edge) / (spread + 1)))
	[ $step -ge 1 ] || step=1
	n=1
	while [ $n -le $((total + 5)) ]; do
		one "$name" $n "$@"
		[ $n -lt $total ] || [ $clean = 1 ] || fail "$name: NEEDLE_FAIL_ALLOC=$n past the total $total still fails"
		if [ $n -lt $edge ] || [ $n -ge $((total - edge)) ]; then n=$((n + 1)); else n=$((n + step)); fi
	done
	echo "$name: $total allocations; N 1..$edge and the last $edge every N, every ${step}th between: clean"
}

files() { # NAME [KEPT]
	node "$TESTS/cli/run_oom.js" "$tmp/$1.base" "$tmp/$1.list" ${2:+"$2"} || fail "$1: files after a failed allocation"
}

baseline plain "$asan" $plain
sweep plain 60 60 "$asan" $plain
files plain

for m in error-frame http-500; do
	name=$(echo "$m" | tr -d -)
	baseline "$name" "$asan" run "$tmp/one.json" --base-url "$REF_URL/v1" --model "ref-$m" --timeout 20
	sweep "$name" 30 30 "$asan" run "$tmp/one.json" --base-url "$REF_URL/v1" --model "ref-$m" --timeout 20
	files "$name"
done

# resume: a folder with the first two records, as an interrupted run leaves it
cp -R "$tmp/plain.base" "$tmp/resume.start"
head -n 2 "$tmp/plain.base/results.jsonl" > "$tmp/resume.start/results.jsonl"
rm -f "$tmp/resume.start/exit" "$tmp/resume.start"/summary.* "$tmp/resume.start/recall.png"
cp "$tmp/resume.start/results.jsonl" "$tmp/kept"
cp -R "$tmp/resume.start" "$tmp/resume.base.in"
rc=0
"$asan" $plain --resume --out "$tmp/resume.base.in" > /dev/null 2> "$tmp/resume.base.err" || rc=$?
[ "$rc" -le 1 ] || fail "resume: unhindered run exit $rc: $(cat "$tmp/resume.base.err")"
mv "$tmp/resume.base.in" "$tmp/resume.base"
echo "$rc" > "$tmp/resume.base/exit"
sweep resume 60 60 "$asan" $plain --resume
files resume "$tmp/kept"

# audit: most of it is loading the tokenizer and generating filler
baseline audit "$NEEDLE" $audit
sweep audit 250 120 "$NEEDLE" $audit
[ $total -gt 1000 ] || fail "audit: only $total allocations: tokenizer or hook not working"
files audit
[ ! -s "$tmp/failures" ] || fail "$(wc -l < "$tmp/failures") runs ended badly (listed above)"
