#!/bin/sh
# --tokenizer ORG/NAME (and --revision) from a local Hugging Face cache, built
# here as huggingface_hub lays it out (models--ORG--NAME/refs/REV holding a
# commit, snapshots/COMMIT/ whose files link into blobs/): the counts equal
# those of the snapshot folder's own path; HF_HUB_CACHE, then HF_HOME/hub;
# a revision by branch and by commit; a model or revision the cache lacks is
# one message, exit 2; a path on disk is never looked up, and which of the
# two was used is said on stderr and recorded in a run's manifest.
set -eu
. "$TESTS/lib/cli.sh"
qw=$(fixture hf/qwen3/tokenizer.json)
qc=$(fixture hf/qwen3/tokenizer_config.json)
ll=$(fixture hf/llama3/tokenizer.json)
lc=$(fixture hf/llama3/tokenizer_config.json)
c1=1111111111111111111111111111111111111111
c2=2222222222222222222222222222222222222222
# snapshot HUB COMMIT TOKENIZER CONFIG: one commit's folder, files linked to blobs
snapshot() {
	repo=$1/models--test-org--tiny-model
	mkdir -p "$repo/blobs" "$repo/refs" "$repo/snapshots/$2"
	for f in "$3" "$4"; do
		sum=$(sha256sum "$f" | cut -d' ' -f1)
		cp "$f" "$repo/blobs/$sum"
	done
	ln -s "../../blobs/$(sha256sum "$3" | cut -d' ' -f1)" "$repo/snapshots/$2/tokenizer.json"
	ln -s "../../blobs/$(sha256sum "$4" | cut -d' ' -f1)" "$repo/snapshots/$2/tokenizer_config.json"
}
snapshot "$tmp/hub" $c1 "$qw" "$qc"
snapshot "$tmp/hub" $c2 "$ll" "$lc"
echo $c1 > "$tmp/hub/models--test-org--tiny-model/refs/main"
printf '%s' $c2 > "$tmp/hub/models--test-org--tiny-model/refs/v2"
printf 'The quick brown fox, 1234 times; 漢字 and émigré.\n' > "$tmp/text"
snap1=$tmp/hub/models--test-org--tiny-model/snapshots/$c1
snap2=$tmp/hub/models--test-org--tiny-model/snapshots/$c2
want1=$("$NEEDLE" count --tokenizer "$snap1" "$tmp/text")
want2=$("$NEEDLE" count --tokenizer "$snap2" "$tmp/text")
[ "$want1" != "$want2" ] || fail "the two tokenizers count alike ($want1): the test cannot tell them apart"

got=$(env -u HF_HOME HF_HUB_CACHE="$tmp/hub" "$NEEDLE" count --tokenizer test-org/tiny-model "$tmp/text")
[ "$got" = "$want1" ] || fail "HF_HUB_CACHE, refs/main: $got, the folder counts $want1"
got=$(env -u HF_HUB_CACHE HF_HOME="$tmp/home" sh -c 'mkdir -p "$HF_HOME" && ln -sfn "$0" "$HF_HOME/hub" && "$1" count --tokenizer test-org/tiny-model --revision v2 "$2"' "$tmp/hub" "$NEEDLE" "$tmp/text")
[ "$got" = "$want2" ] || fail "HF_HOME/hub, --revision v2: $got, the folder counts $want2"
got=$(env HF_HUB_CACHE="$tmp/hub" "$NEEDLE" count --tokenizer test-org/tiny-model --revision $c2 "$tmp/text")
[ "$got" = "$want2" ] || fail "--revision COMMIT: $got, the folder counts $want2"
# the chat template comes from the snapshot too (a model folder)
env HF_HUB_CACHE="$tmp/hub" "$NEEDLE" count --tokenizer test-org/tiny-model --explain \
	--messages - <<'JSON' >"$tmp/out" 2>"$tmp/err" || fail "--messages from the cache: $(cat "$tmp/err")"
[{"role": "user", "content": "hi"}]
JSON
grep -q "$c1" "$tmp/err" || fail "--explain does not name the snapshot's template: $(cat "$tmp/err")"

check_exit 2 "cannot read 'test-org/other': no such file or folder, nor a model of that id in the Hugging Face cache '$tmp/hub'" \
	env HF_HUB_CACHE="$tmp/hub" "$NEEDLE" count --tokenizer test-org/other "$tmp/text"
check_one_line "missing model"
check_exit 2 "cannot find revision 'v9' in the Hugging Face cache" \
	env HF_HUB_CACHE="$tmp/hub" "$NEEDLE" count --tokenizer test-org/tiny-model --revision v9 "$tmp/text"
check_exit 2 "option '--revision' needs '--tokenizer ORG/NAME'" \
	"$NEEDLE" count --tokenizer "$qw" --revision main "$tmp/text"
# a path on disk wins over the cache
mkdir -p "$tmp/cwd/test-org"
ln -s "$snap2" "$tmp/cwd/test-org/tiny-model"
got=$(cd "$tmp/cwd" && HF_HUB_CACHE="$tmp/hub" "$NEEDLE" count --tokenizer test-org/tiny-model "$tmp/text" 2> "$tmp/err")
[ "$got" = "$want2" ] || fail "a local folder named like the id: $got, want its own count $want2"
# which one was used is said, and a run's manifest records it
[ "$(cat "$tmp/err")" = "needle: tokenizer test-org/tiny-model: the local folder test-org/tiny-model" ] ||
	fail "the local folder that shadows the cache is not named: $(cat "$tmp/err")"
HF_HUB_CACHE="$tmp/hub" "$NEEDLE" count --tokenizer test-org/tiny-model "$tmp/text" > /dev/null 2> "$tmp/err"
[ "$(cat "$tmp/err")" = "needle: tokenizer test-org/tiny-model: the hugging face cache $snap1" ] ||
	fail "the cache's snapshot is not named: $(cat "$tmp/err")"
refserver_start
cat > "$tmp/s.json" <<'JSON'
{"suite": "hub", "cases": [{"id": "hi", "kind": "chat", "messages": [{"role": "user", "content": "Say hi."}]}]}
JSON
for where in local cache; do
	dir=$tmp; [ $where = local ] && dir=$tmp/cwd
	(cd "$dir" && env HF_HUB_CACHE="$tmp/hub" "$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model ref-good \
		--tokenizer test-org/tiny-model --template qwen3 --out "$tmp/run-$where") > "$tmp/out" 2>&1 || true
	node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		process.exit(m.tokenizer.id === "test-org/tiny-model" && m.tokenizer.from === process.argv[2] ? 0 : 1)' \
		"$tmp/run-$where/manifest.json" "$([ $where = local ] && echo 'local folder' || echo 'hugging face cache')" ||
		fail "the $where run's manifest does not record the tokenizer's source: $(cat "$tmp/out") $(head -c 1500 "$tmp/run-$where/manifest.json")"
done
echo "tok_hub: ORG/NAME and --revision from the Hugging Face cache count as the snapshot folder does"
