#!/bin/sh
# needle gen cases: suite files, determinism, the shipped suites are what their
# own regeneration command gives, help, bad input (exit 2).
set -eu
. "$TESTS/lib/cli.sh"

"$NEEDLE" gen cases --help > "$tmp/help"
grep -qi 'example' "$tmp/help" || fail "help has no examples"
grep -q -- '--kind' "$tmp/help" || fail "help lacks --kind"

# The description quotes the command, --out included: run each in its own
# directory with the same relative --out.
for d in a b c; do
	mkdir -p "$tmp/run-$d"
	seed=3
	[ "$d" = c ] && seed=4
	(cd "$tmp/run-$d" && "$NEEDLE" gen cases --seed $seed --out out > /dev/null)
	ln -s "$tmp/run-$d/out" "$tmp/$d"
done
[ -s "$tmp/a/suite.json" ] || fail "no suite.json"
cmp -s "$tmp/a/suite.json" "$tmp/b/suite.json" || fail "seed 3 twice: suites differ"
cmp -s "$tmp/a/suite.json" "$tmp/c/suite.json" && fail "seeds 3 and 4 give the same suite"

# The suite's shape: the BRIEF schema, each kind present, images are PNG data URLs.
node -e '
const fs = require("fs"), s = JSON.parse(fs.readFileSync(process.argv[1]));
const kinds = {};
if (s.suite !== "smoke" || typeof s.description !== "string" || typeof s.defaults !== "object")
  throw new Error("top level");
const ids = new Set();
for (const c of s.cases) {
  if (ids.has(c.id)) throw new Error("duplicate id " + c.id);
  ids.add(c.id);
  kinds[c.kind] = (kinds[c.kind] || 0) + 1;
  if (!Array.isArray(c.messages) || !c.messages.length || typeof c.expect !== "object")
    throw new Error("case " + c.id);
  for (const m of c.messages)
    if (Array.isArray(m.content))
      for (const p of m.content)
        if (p.type === "image_url") {
          const b = Buffer.from(p.image_url.url.replace(/^data:image\/png;base64,/, ""), "base64");
          if (b.readUInt32BE(0) !== 0x89504e47) throw new Error("not a png in " + c.id);
        }
}
const want = {chat: 12, tool_call: 5, multi_turn: 4, image_order: 4};
for (const k in want) if (kinds[k] !== want[k]) throw new Error(k + ": " + kinds[k]);
' "$tmp/a/suite.json" || fail "suite shape"

# --kind json: 12 tasks, 3 repeats each at temperature 1.0, strict JSON expectations.
"$NEEDLE" gen cases --seed 3 --kind json --out "$tmp/j.json" > /dev/null
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
if (s.suite !== "json-tasks" || s.cases.length !== 12) throw new Error("count");
for (const c of s.cases)
  if (c.kind !== "chat" || c.temperature !== 1 || c.top_p !== 1 || c.repeat !== 3 ||
      Object.keys(c.expect).join() !== "json") throw new Error("case " + c.id);
' "$tmp/j.json" || fail "json kind"

# The shipped suites equal a fresh run of the command in their description.
for f in json-tasks smoke; do
	suite=$(fixture "suites/$f.json")
	[ -s "$suite" ] || fail "suites/$f.json is empty"
	cmd=$(node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1])).description;
const m = d.match(/needle gen cases (.*) --out (\S+)$/);
if (!m) throw new Error("no command in description: " + d);
console.log(m[1]);' "$suite")
	# shellcheck disable=SC2086
	"$NEEDLE" gen cases $cmd --out "$tmp/$f.json" > /dev/null
	node -e '
const fs = require("fs");
const a = JSON.parse(fs.readFileSync(process.argv[1])), b = JSON.parse(fs.readFileSync(process.argv[2]));
delete a.description; delete b.description;
if (JSON.stringify(a) !== JSON.stringify(b)) process.exit(1);' "$suite" "$tmp/$f.json" ||
		fail "suites/$f.json is stale: regenerate it with the command in its description"
done

check_exit 2 "option '--seed' is required" "$NEEDLE" gen cases --out "$tmp/x"
check_exit 2 "option '--out' is required" "$NEEDLE" gen cases --seed 1
check_exit 2 "unknown case kind 'jsno'" "$NEEDLE" gen cases --seed 1 --kind jsno --out "$tmp/x"
check_exit 2 "unknown case kind ''" "$NEEDLE" gen cases --seed 1 --kind json, --out "$tmp/x"
check_exit 2 "wants an integer" "$NEEDLE" gen cases --seed 1x --out "$tmp/x"
check_exit 2 "non-negative" "$NEEDLE" gen cases --seed -1 --out "$tmp/x"
check_exit 2 "unexpected argument" "$NEEDLE" gen cases --seed 1 --out "$tmp/x" extra
grep -q "try 'needle gen cases --help'" "$tmp/err" || fail "no hint to --help"
[ ! -e "$tmp/x" ] || fail "a failed run created its output"

: > "$tmp/file"
# the message names the path
check_exit 2 "$tmp/file" "$NEEDLE" gen cases --seed 1 --out "$tmp/file/sub"
echo ok
