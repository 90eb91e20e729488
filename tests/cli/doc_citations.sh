#!/bin/sh
# Every citation in the repository points at something a clone has: no file
# cites the design notes or field reports that are not in it (their names are
# spelled in pieces below, so this file does not cite them), every docs/*.md
# named anywhere exists, every citation of a page and a quoted section names a
# heading of that page, and every Markdown link to a .md file (with its
# #anchor) resolves. Prints each offender as FILE:LINE: reason. The checker
# first runs on a planted tree with one offence of each kind.
set -eu
. "$TESTS/lib/cli.sh"
cat > "$tmp/check.js" <<'JS'
const fs = require('fs'), path = require('path');
const root = process.argv[2];
const skipDirs = new Set(['.git', 'node_modules', 'build', 'results']);
const banned = [
	[new RegExp('PROTO' + 'COL\\.md'), 'cites a design note that is not in the repository'],
	[new RegExp('DES' + 'IGN\\.md'), 'cites a design note that is not in the repository'],
	[new RegExp('TEMP' + 'LATES\\.md'), 'cites a design note that is not in the repository'],
	[new RegExp('TOKEN' + 'IZERS\\.md'), 'cites a design note that is not in the repository'],
	[new RegExp('\\bseeds? ' + '0\\d'), 'cites a field report that is not in the repository'],
	[new RegExp('\\.\\./' + 'shared/'), 'points outside the repository'],
];
const files = [];
(function walk(dir) {
	for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, e.name);
		if (e.isDirectory()) {
			if (!skipDirs.has(e.name)) walk(p);
		} else if (e.isFile() && fs.statSync(p).size < 4 << 20) {
			files.push(p);
		}
	}
})(root);
const headings = new Map();
function headingsOf(file) {
	if (!headings.has(file)) {
		const set = new Set(), slugs = new Set();
		let fence = false;
		for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
			if (/^\s*(```|~~~)/.test(line)) fence = !fence;
			const m = !fence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
			if (!m) continue;
			const text = m[1].replace(/`/g, '');
			set.add(text);
			slugs.add(text.toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-'));
		}
		headings.set(file, { set, slugs });
	}
	return headings.get(file);
}
// A cited page: relative to the citing file's folder, else to the root.
function resolve(from, rel) {
	for (const base of [path.dirname(from), root]) {
		const p = path.resolve(base, rel);
		if (fs.existsSync(p) && fs.statSync(p).isFile()) return p;
	}
	return null;
}
let bad = 0, cited = 0;
const say = (f, n, why) => { bad++; console.log(`${path.relative(root, f)}:${n}: ${why}`); };
for (const f of files) {
	const buf = fs.readFileSync(f);
	if (buf.includes(0)) continue;
	const lines = buf.toString('utf8').split('\n');
	const md = f.endsWith('.md');
	lines.forEach((line, i) => {
		const n = i + 1;
		// a name cut by a line break: the next line's comment mark dropped
		const next = (lines[i + 1] || '').replace(/^\s*(\*|#+|\/\/)?\s*/, '');
		for (const [re, why] of banned)
			if (re.test(line) || (!re.test(next) && re.test(line + ' ' + next))) say(f, n, why);
		for (const m of line.matchAll(/(?<![\w./-])docs\/[\w-]+\.md/g)) {
			cited++;
			if (!fs.existsSync(path.join(root, m[0]))) say(f, n, `${m[0]} does not exist`);
		}
		// a .md page, then "Section" and more (quotes may be JSON-escaped)
		const cite = /((?:[\w.-]+\/)*[\w.-]+\.md),? \\?"([^"\\]+)\\?"((?:(?:,| and) \\?"[^"\\]+\\?")*)/g;
		for (const m of line.matchAll(cite)) {
			const page = resolve(f, m[1]);
			if (!page) { say(f, n, `${m[1]} does not exist`); continue; }
			const secs = [m[2], ...[...m[3].matchAll(/"([^"\\]+)\\?"/g)].map(x => x[1])];
			for (const s of secs) {
				cited++;
				if (!headingsOf(page).set.has(s)) say(f, n, `${m[1]} has no section "${s}"`);
			}
		}
		if (!md) return;
		for (const m of line.matchAll(/\]\(([^)\s#]*\.md)?(#[^)\s]*)?\)/g)) {
			if (!m[1] && !m[2]) continue;
			if (m[1] && /^[a-z]+:/.test(m[1])) continue;
			cited++;
			const page = m[1] ? resolve(f, m[1]) : f;
			if (!page) { say(f, n, `link to ${m[1]}, which does not exist`); continue; }
			if (m[2] && !headingsOf(page).slugs.has(m[2].slice(1)))
				say(f, n, `link to ${m[1] || ''}${m[2]}: no such section`);
		}
	});
}
console.log(`${files.length} files, ${cited} citations checked, ${bad} broken`);
process.exit(bad ? 1 : 0);
JS
p=$tmp/planted
d=docs # the planted names are spelled through $d, so this file cites none of them
mkdir -p "$p/$d" "$p/src"
printf '# A page\n\n## Real section\n\n```\n## Not a heading\n```\n' > "$p/$d/a.md"
q='"'
{
	echo "/* $d/a.md ${q}Real section${q} and $d/a.md ${q}Not a heading${q} */"
	echo "/* $d/missing.md */"
	echo "/* see PROTO""COL.md and seed 0""02 */"
	echo "/* and the seed"
	echo " * 0""01 report */"
} > "$p/src/x.c"
echo "[ok]($d/a.md#real-section) [bad]($d/a.md#nope) [gone]($d/b.md)" > "$p/README.md"
check_exit 1 "" node "$tmp/check.js" "$p"
for want in "src/x.c:1: $d/a.md has no section ${q}Not a heading${q}" "src/x.c:2: $d/missing.md does not exist" \
	'src/x.c:3: cites a design note' 'src/x.c:3: cites a field report' \
	'src/x.c:4: cites a field report' "README.md:1: link to $d/a.md#nope" \
	"README.md:1: link to $d/b.md" '8 broken'; do
	grep -qF "$want" "$tmp/out" || fail "planted tree: no '$want' in: $(cat "$tmp/out")"
done
node "$tmp/check.js" "$ROOT" || fail "citations above do not resolve"
