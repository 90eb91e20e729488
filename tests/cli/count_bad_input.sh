#!/bin/sh
# needle count on bad input: every case is one clear message on stderr and
# exit 2, never a crash: truncated and malformed tokenizer.json (file and
# position named), unsupported components (named), missing files, invalid
# UTF-8 in the text (byte offset), malformed --jsonl lines.
set -eu
. "$TESTS/lib/cli.sh"
fix=$(fixture tokenizers)
good=$fix/bpe_ties.json

# expect_fail WANT ARGS...: exit 2, one line on stderr naming WANT (besides
# the "try" hint), nothing on stdout.
expect_fail() {
	want=$1
	shift
	check_exit 2 "$want" "$NEEDLE" count "$@"
	check_one_line "count $*"
	[ -n "${ALLOW_STDOUT:-}" ] || check_no_stdout "count $*"
}

printf 'ab c' > "$tmp/text"
[ "$("$NEEDLE" count --tokenizer "$good" "$tmp/text")" -gt 0 ] || fail "good tokenizer does not count"

# Truncated at several points, including inside the vocab and the merges.
size=$(wc -c < "$good")
for cut in 1 20 200 1500 $((size / 2)) $((size - 3)); do
	head -c "$cut" "$good" > "$tmp/trunc.json"
	expect_fail "cannot parse '$tmp/trunc.json': line" --tokenizer "$tmp/trunc.json" "$tmp/text"
	grep -q 'unexpected end of file' "$tmp/err" || fail "cut at $cut: $(cat "$tmp/err")"
done

# Malformed: the message gives line and column of the fault.
printf '{\n  "model": {"type": "BPE",\n    "vocab": {"a": 0,, "b": 1}}}\n' > "$tmp/bad1.json"
expect_fail "'$tmp/bad1.json': line 3, column 22" --tokenizer "$tmp/bad1.json" "$tmp/text"
printf '{"model": {"vocab": {"a": "x"}, "merges": []}}' > "$tmp/bad2.json"
expect_fail "expected a non-negative integer" --tokenizer "$tmp/bad2.json" "$tmp/text"
printf '{"model": {"vocab": {"a": 0}, "merges": ["a b"]}}' > "$tmp/bad3.json"
expect_fail "merge 0 uses 'b', which is not in the vocabulary" --tokenizer "$tmp/bad3.json" "$tmp/text"
printf '[1, 2]' > "$tmp/bad4.json"
expect_fail "expected '{'" --tokenizer "$tmp/bad4.json" "$tmp/text"
printf '{"model": {"vocab": {"a": 0}, "merges": []}} x' > "$tmp/bad5.json"
expect_fail "unexpected data after the JSON document" --tokenizer "$tmp/bad5.json" "$tmp/text"
printf '{"model": {"vocab": {"\\ud800": 0}, "merges": []}}' > "$tmp/bad6.json"
expect_fail "lone high surrogate" --tokenizer "$tmp/bad6.json" "$tmp/text"

# Unsupported components and options, each named.
unsupported() {
	want=$1
	node -e '
const fs = require("fs");
const t = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const [key, value] = [process.argv[2], JSON.parse(process.argv[3])];
if (key.startsWith("model.")) t.model[key.slice(6)] = value; else t[key] = value;
fs.writeFileSync(process.argv[4], JSON.stringify(t));' "$good" "$2" "$3" "$tmp/u.json"
	expect_fail "$want" --tokenizer "$tmp/u.json" "$tmp/text"
}
unsupported "unsupported normalizer 'Lowercase'" normalizer '{"type": "Lowercase"}'
unsupported "unsupported normalizer 'NFKC'" normalizer '{"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "NFKC"}]}'
unsupported "unsupported pre-tokenizer 'Whitespace'" pre_tokenizer '{"type": "Whitespace"}'
unsupported "unsupported Split behavior 'Sideways'" pre_tokenizer '{"type": "Split", "pattern": {"String": "-"}, "behavior": "Sideways", "invert": false}'
unsupported "unsupported post-processor 'Funky'" post_processor '{"type": "Funky"}'
unsupported "unsupported model 'Unigram'" model.type '"Unigram"'
unsupported "unsupported BPE option 'dropout'" model.dropout '0.1'
unsupported "unsupported BPE option 'continuing_subword_prefix'" model.continuing_subword_prefix '"##"'
unsupported "unsupported option 'truncation'" truncation '{"max_length": 5}'
unsupported "unsupported option 'padding'" padding '{"strategy": "BatchLongest"}'
unsupported "unsupported field 'surprise'" surprise '1'
unsupported "unsupported component 'ByteLevel' option 'frobnicate'" pre_tokenizer '{"type": "ByteLevel", "frobnicate": true}'
unsupported "(unclosed'" pre_tokenizer '{"type": "Split", "pattern": {"Regex": "(unclosed"}, "behavior": "Isolated", "invert": false}'

# Missing files.
expect_fail "cannot read '$tmp/nope.json'" --tokenizer "$tmp/nope.json" "$tmp/text"
expect_fail "cannot read '$tmp/nope.txt'" --tokenizer "$good" "$tmp/nope.txt"
expect_fail "cannot read '$tmp/nope.jsonl'" --tokenizer "$good" --jsonl "$tmp/nope.jsonl"

# Invalid UTF-8 in the text: the offset of the first bad byte.
printf 'abc\377def' > "$tmp/bad.txt"
expect_fail "invalid UTF-8 at byte 3" --tokenizer "$good" "$tmp/bad.txt"
printf 'ab\355\240\200' > "$tmp/surrogate.txt"
expect_fail "invalid UTF-8 at byte 3" --tokenizer "$good" "$tmp/surrogate.txt"
printf '\300\201' > "$tmp/overlong.txt"
expect_fail "invalid UTF-8 at byte 0" --tokenizer "$good" "$tmp/overlong.txt"
printf 'xyz\342\202' > "$tmp/cut.txt"
expect_fail "invalid UTF-8 at byte 3" --tokenizer "$good" "$tmp/cut.txt"

# --jsonl: counts stream out line by line; a bad line stops there, named.
printf '"ok"\n42\n' > "$tmp/lines.jsonl"
ALLOW_STDOUT=1 expect_fail "line 2: expected one JSON string" --tokenizer "$good" --jsonl "$tmp/lines.jsonl"
[ "$(cat "$tmp/out")" = "$("$NEEDLE" count --tokenizer "$good" "$tmp/text" < /dev/null | sed 's/.*/&/' | head -0; printf 'ok' | "$NEEDLE" count --tokenizer "$good" -)" ] ||
	fail "jsonl line 1 count differs from the plain count"
printf '"ab\\ud800"\n' > "$tmp/lone.jsonl"
ALLOW_STDOUT=1 expect_fail "line 1" --tokenizer "$good" --jsonl "$tmp/lone.jsonl"
# Out of memory at the Nth allocation, for a spread of N: a clean exit 2
# with a message, or success once N is past the last allocation.
for n in 1 2 3 5 8 13 21 34 55 89 144 233 377 610 987; do
	st=0
	NEEDLE_FAIL_ALLOC=$n "$NEEDLE" count --tokenizer "$fix/added_tokens.json" "$tmp/text" \
		> "$tmp/out" 2> "$tmp/err" || st=$?
	case $st in
	0) ;;
	2) grep -q 'out of memory' "$tmp/err" || fail "NEEDLE_FAIL_ALLOC=$n: $(cat "$tmp/err")" ;;
	*) fail "NEEDLE_FAIL_ALLOC=$n: exit $st: $(cat "$tmp/err")" ;;
	esac
done
echo ok
