#!/bin/sh
# Hostile chat templates (issue 22, findings 2, 3 and 8), each generated here
# and rendered by `needle count --template F.jinja --messages`: every one
# ends with exit 2 and one line naming the template position where jinja2 on
# CPython raises (RecursionError, a compile limit) or where a budget of
# harness/jinja/jinja.h runs out, within seconds and a memory cap, never a
# crash; the near misses Python renders, needle renders too. Run with
# NEEDLE=build/asan/needle for the sanitizer build (the memory cap is then
# not measured: ASan's shadow memory is not the template's).
set -eu
. "$TESTS/lib/cli.sh"

tok=$(fixture hf/qwen3/tokenizer.json)
printf '[{"role":"user","content":"hi"}]' > "$tmp/m.json"
case $NEEDLE in
*asan*) asan=1 ;;
*) asan=0 ;;
esac

# gen NAME PYTHON-EXPR: writes $tmp/NAME.jinja from the expression's value.
gen() {
	/usr/bin/python3 -c "import sys; sys.stdout.write($2)" > "$tmp/$1.jinja"
}
# render NAME: renders $tmp/NAME.jinja; sets st, secs and kb (peak RSS).
render() {
	st=0
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$NEEDLE" count --tokenizer "$tok" \
		--template "$tmp/$1.jinja" --messages "$tmp/m.json" --print-prompt \
		> "$tmp/out" 2> "$tmp/err" || st=$?
	secs=$(tail -n 1 "$tmp/time" | cut -d' ' -f1)
	kb=$(tail -n 1 "$tmp/time" | cut -d' ' -f2)
}
# refused NAME WANT POSITION SECONDS MB: exit 2, one line holding WANT and
# "(template line POSITION)", no prompt, under SECONDS and MB of peak memory.
refused() {
	render "$1"
	[ "$st" = 2 ] || fail "$1: exit $st, expected 2: $(head -c 300 "$tmp/err")"
	grep -qF -- "$2" "$tmp/err" || fail "$1: stderr lacks '$2': $(head -c 300 "$tmp/err")"
	grep -qF -- "(template line $3)" "$tmp/err" ||
		fail "$1: no position 'line $3': $(head -c 300 "$tmp/err")"
	check_one_line "$1"
	check_no_stdout "$1"
	within "$1" "$4" "$5"
}
# rendered NAME TEXT SECONDS MB: exit 0, the prompt is TEXT.
rendered() {
	render "$1"
	[ "$st" = 0 ] || fail "$1: exit $st: $(head -c 300 "$tmp/err")"
	[ "$(cat "$tmp/out")" = "$2" ] || fail "$1: printed '$(head -c 100 "$tmp/out")', expected '$2'"
	within "$1" "$3" "$4"
}
within() {
	awk -v s="$secs" -v max="$2" 'BEGIN { exit !(s <= max) }' ||
		fail "$1: took ${secs}s, more than $2 s"
	[ "$asan" = 1 ] || [ "$kb" -le $(($3 * 1024)) ] || fail "$1: peak ${kb} KB, more than $3 MB"
}

deep='"{% set ns = namespace(a=1, b=1) %}{% for i in range(100000) %}{% set ns.a = [ns.a] %}{% set ns.b = [ns.b] %}{% endfor %}"'

# 1. Walks over values nested 100,000 deep: Python raises RecursionError.
for op in '==' '!=' '<' 'in'; do
	case $op in
	in) gen deep_in "$deep + '{{ ns.a in [ns.b] }}'" ;;
	*) gen deep_in "$deep + '{{ ns.a $op ns.b }}'" ;;
	esac
	refused deep_in "comparing values nested deeper than 989" "1, column 124" 10 200
done
gen deep_sort "$deep + '{{ [ns.a, ns.b]|sort|length }}'"
refused deep_sort "comparing values nested deeper than 989" "1, column 137" 10 200
gen deep_print "$deep + '{{ ns.a }}'"
refused deep_print "printing values nested deeper than 989" "1, column 121" 10 200
gen deep_string "$deep + '{{ ns.a|string|length }}'"
refused deep_string "printing values nested deeper than 989" "1, column 129" 10 200
gen deep_json "$deep + '{{ ns.a|tojson }}'"
refused deep_json "tojson of values nested deeper than 989" "1, column 129" 10 200
# 989 levels print and compare, as in Python.
gen deep_ok "'{% set ns = namespace(a=1, b=1) %}{% for i in range(989) %}{% set ns.a = [ns.a] %}{% set ns.b = [ns.b] %}{% endfor %}{{ ns.a == ns.b }}{{ (ns.a|string)|length }}'"
rendered deep_ok "True1979" 10 200
# The same list 2**60 times over: identity answers at once, as in Python.
gen doubled "'{% set ns = namespace(a=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a == ns.a }} {{ ns.a in [ns.a] }} {{ [ns.a].count(ns.a) }}'"
rendered doubled "True True 1" 2 100

# 2. Chains past what CPython compiles.
gen filters "'{{ 1' + '|string' * 100000 + ' }}'"
refused filters "an expression nested too deeply (Python cannot compile it)" "1, column 697710" 10 300
gen filters_ok "'{{ 1' + '|string' * 300 + ' }}'"
rendered filters_ok "1" 5 100
gen elifs "'{% if false %}' + '{% elif false %}' * 100000 + '{% else %}x{% endif %}'"
refused elifs "an if with more than 2970 elifs" "1, column 47538" 10 300
gen elifs_ok "'{% if false %}' + '{% elif false %}' * 2000 + '{% else %}x{% endif %}'"
rendered elifs_ok "x" 5 100
gen ifelse "'{% if false %}{% else %}' * 100000 + 'x' + '{% endif %}' * 100000"
refused ifelse "blocks nested too deeply" "1, column 4671" 10 300
gen parens "'{{ ' + '(' * 100 + '1' + ')' * 100 + ' }}'"
refused parens "expression nested too deeply (Python raises RecursionError)" "1, column 73" 5 100
gen loops "'{% for i in [1] %}' * 21 + 'x' + '{% endfor %}' * 21"
refused loops "for loops nested more than 20 deep" "1, column 364" 5 100
gen loops_ok "'{% for i in [1] %}' * 20 + 'x' + '{% endfor %}' * 20"
rendered loops_ok "x" 5 100
gen macro "'{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(100000) }}'"
refused macro "macro calls nested deeper than 198" "1, column 35" 5 100

# 3. Budgets: work inside builtins, value memory checked before allocating
# (a big integer's power too, before it is computed), the parsed template's
# memory.
gen scan_in "'{% set s = \"a\" * 10000000 %}{% for i in range(100000) %}{% if \"b\" in s %}x{% endif %}{% endfor %}'"
refused scan_in "units of work in builtins" "1, column 63" 20 200
gen scan_count "'{% set s = \"a\" * 10000000 %}{% for i in range(100000) %}{{ s.count(\"b\") }}{% endfor %}'"
refused scan_count "units of work in builtins" "1, column 67" 20 200
gen mult "'{{ \"a\" * 10**10 }}'"
refused mult "values would exceed the cap of 536870912 bytes" "1, column 8" 2 100
gen indent "'{{ \"a\" | indent(10**9, true) }}'"
refused indent "values would exceed the cap of 536870912 bytes" "1, column 10" 2 100
gen pow_huge "'{{ 2 ** (10 ** 10) }}'"
refused pow_huge "values would exceed the cap of 536870912 bytes" "1, column 6" 2 100
gen pow_big "'{{ 2 ** (10 ** 9) }}'"
refused pow_big "an integer of more than 4300 digits" "1, column 6" 2 100
gen tags "'{{ x }}' * 1000000"
refused tags "the parsed template would take more than 268435456 bytes" "1, column 4893356" 20 400

# 4. What Python prints differently: {{ self }} is refused by name.
gen self "'a{{ self }}'"
refused self "'self' (jinja2's template reference" "1, column 5" 2 100
echo "hostile templates: all refused with their positions, near misses rendered"
