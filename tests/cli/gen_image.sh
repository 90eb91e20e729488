#!/bin/sh
# needle gen image: files and manifest, determinism, help, bad input (exit 2).
set -eu
. "$TESTS/lib/cli.sh"

"$NEEDLE" gen image --help > "$tmp/help"
grep -q '^Examples' "$tmp/help" || grep -qi 'example' "$tmp/help" || fail "help has no examples"
grep -q -- '--objects' "$tmp/help" || fail "help lacks --objects"

"$NEEDLE" gen image --seed 7 --count 6 --numbers --out "$tmp/a" > /dev/null
"$NEEDLE" gen image --seed 7 --count 6 --numbers --out "$tmp/b" > /dev/null
"$NEEDLE" gen image --seed 8 --count 6 --numbers --out "$tmp/c" > /dev/null
for i in 01 02 03 04 05 06; do
	[ -s "$tmp/a/image-$i.png" ] || fail "image-$i.png missing"
	cmp -s "$tmp/a/image-$i.png" "$tmp/b/image-$i.png" || fail "seed 7 twice: image-$i.png differs"
done
cmp -s "$tmp/a/manifest.json" "$tmp/b/manifest.json" || fail "seed 7 twice: manifest differs"
cmp -s "$tmp/a/manifest.json" "$tmp/c/manifest.json" && fail "seeds 7 and 8 give the same manifest"
# PNG signature
head -c 8 "$tmp/a/image-01.png" | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' ||
	fail "image-01.png is not a PNG"

# The manifest names each file with its hash, six different shapes and colours.
node -e '
const fs = require("fs"), crypto = require("crypto");
const dir = process.argv[1], m = JSON.parse(fs.readFileSync(dir + "/manifest.json"));
if (m.seed !== 7 || m.size !== 256 || m.images.length !== 6) throw new Error("header " + JSON.stringify(m));
const shapes = new Set(), colours = new Set();
for (const im of m.images) {
  const bytes = fs.readFileSync(dir + "/" + im.file);
  const sha = crypto.createHash("sha256").update(bytes).digest("hex");
  if (sha !== im.sha256 || bytes.length !== im.bytes) throw new Error("hash of " + im.file);
  if (im.text !== im.colour + " " + im.shape) throw new Error("text " + im.text);
  if (!/^[0-9]{2}$/.test(im.label)) throw new Error("label " + im.label);
  shapes.add(im.shape); colours.add(im.colour);
}
if (shapes.size !== 6 || colours.size !== 6) throw new Error("not all different");
' "$tmp/a" || fail "manifest check"

# Explicit objects, labels in capitals, size honoured (IHDR width at byte 16).
"$NEEDLE" gen image --objects 'red circle, blue square:ok' --size 128 --out "$tmp/d" > /dev/null
node -e '
const fs = require("fs"), dir = process.argv[1], m = JSON.parse(fs.readFileSync(dir + "/manifest.json"));
if (m.seed !== null || m.images.length !== 2) throw new Error("header");
if (m.images[0].text !== "red circle" || m.images[0].label !== null) throw new Error("first");
if (m.images[1].text !== "blue square" || m.images[1].label !== "OK") throw new Error("second");
const png = fs.readFileSync(dir + "/image-01.png");
if (png.readUInt32BE(16) !== 128 || png.readUInt32BE(20) !== 128) throw new Error("size");
' "$tmp/d" || fail "objects check"

check_exit 2 "option '--out' is required" "$NEEDLE" gen image --seed 1
check_exit 2 "option '--seed' is required" "$NEEDLE" gen image --out "$tmp/x"
check_exit 2 "wants an integer" "$NEEDLE" gen image --seed abc --out "$tmp/x"
check_exit 2 "non-negative" "$NEEDLE" gen image --seed -4 --out "$tmp/x"
check_exit 2 "option '--count' wants 1..36" "$NEEDLE" gen image --seed 1 --count 0 --out "$tmp/x"
check_exit 2 "option '--count' wants 1..36" "$NEEDLE" gen image --seed 1 --count 37 --out "$tmp/x"
check_exit 2 "option '--size' wants 32..1024" "$NEEDLE" gen image --seed 1 --size 8 --out "$tmp/x"
check_exit 2 "unknown shape 'blob'" "$NEEDLE" gen image --objects 'red blob' --out "$tmp/x"
check_exit 2 "unknown colour 'pink'" "$NEEDLE" gen image --objects 'pink circle' --out "$tmp/x"
check_exit 2 "label" "$NEEDLE" gen image --objects 'red circle:a*b' --out "$tmp/x"
check_exit 2 "exclude each other" "$NEEDLE" gen image --objects 'red circle' --count 2 --out "$tmp/x"
check_exit 2 "unknown option" "$NEEDLE" gen image --seed 1 --colour red --out "$tmp/x"
grep -q "try 'needle gen image --help'" "$tmp/err" || fail "no hint to --help"
[ ! -e "$tmp/x" ] || fail "a failed run created its output directory"

# An output directory that cannot be created: an input error, exit 2.
: > "$tmp/file"
# the message names the path
check_exit 2 "$tmp/file" "$NEEDLE" gen image --seed 1 --out "$tmp/file/sub"
echo ok
