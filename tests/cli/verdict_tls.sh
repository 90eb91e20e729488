#!/bin/sh
# TLS with a private CA (issue 8 item 13): a loopback HTTPS server whose
# certificate is signed by a CA made here. Without trust the endpoint is
# unusable (exit 3); --cacert, $CURL_CA_BUNDLE and $SSL_CERT_FILE each make it
# pass and are named in the manifest (SSL_CERT_FILE also behind an empty
# CURL_CA_BUNDLE), as does $SSL_CERT_DIR; --insecure is explicit and recorded;
# a CA file or folder that does not exist, or a FIFO, is a usage error (exit 2)
# before any request.
set -eu
. "$TESTS/lib/cli.sh"

cd "$tmp"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
	-subj "/CN=needle test CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > san.ext
openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem \
	-days 2 -extfile san.ext 2>/dev/null
fake_server "$TESTS/cli/verdict_server.js" srv.key srv.pem
case $FAKE_URL in https://*) ;; *) fail "server is not https: $FAKE_URL" ;; esac

cat > suite.json <<'JSON'
{"suite": "tls", "cases": [{"id": "hello", "kind": "chat", "max_tokens": 8,
  "messages": [{"role": "user", "content": "Say ok."}], "expect": {"contains": ["ok"]}}]}
JSON

unset CURL_CA_BUNDLE SSL_CERT_FILE || true
check_exit 3 "certificate" "$NEEDLE" run suite.json --base-url "$FAKE_URL" --out r0

tls_of() { # DIR KEY -> the manifest's endpoint.tls.KEY as JSON
	node -e 'const m=JSON.parse(require("fs").readFileSync(process.argv[1]+"/manifest.json","utf8"));
		process.stdout.write(JSON.stringify(m.endpoint.tls[process.argv[2]]))' "$1" "$2"
}

check_exit 0 "" "$NEEDLE" run suite.json --base-url "$FAKE_URL" --out r1 --cacert ca.pem
[ "$(tls_of r1 cacert_from)" = '"--cacert"' ] || fail "cacert_from: $(tls_of r1 cacert_from)"
[ "$(tls_of r1 insecure)" = false ] || fail "insecure: $(tls_of r1 insecure)"

CURL_CA_BUNDLE=$tmp/ca.pem check_exit 0 "" "$NEEDLE" run suite.json --base-url "$FAKE_URL" --out r2
[ "$(tls_of r2 cacert_from)" = '"CURL_CA_BUNDLE"' ] || fail "CURL_CA_BUNDLE not used: $(tls_of r2 cacert_from)"

SSL_CERT_FILE=$tmp/ca.pem check_exit 0 "" "$NEEDLE" run suite.json --base-url "$FAKE_URL" --out r3
[ "$(tls_of r3 cacert_from)" = '"SSL_CERT_FILE"' ] || fail "SSL_CERT_FILE not used: $(tls_of r3 cacert_from)"

check_exit 0 "" "$NEEDLE" run suite.json --base-url "$FAKE_URL" --out r4 --insecure
[ "$(tls_of r4 insecure)" = true ] || fail "--insecure not in the manifest: $(tls_of r4 insecure)"
[ "$(tls_of r4 cacert)" = null ] || fail "cacert with --insecure alone: $(tls_of r4 cacert)"

check_exit 2 "CA file '$tmp/nope.pem' (--cacert)" "$NEEDLE" run suite.json --base-url "$FAKE_URL" \
	--out r5 --cacert "$tmp/nope.pem"
check_one_line "missing CA file"
[ ! -e r5 ] || fail "a results folder was made for a missing CA file"
# SSL_CERT_FILE behind a CURL_CA_BUNDLE set empty (unset, as curl reads it);
# SSL_CERT_DIR, a folder of CAs named by their hashes, trusted and recorded
CURL_CA_BUNDLE= SSL_CERT_FILE=$tmp/ca.pem check_exit 0 "" "$NEEDLE" run suite.json \
	--base-url "$FAKE_URL" --out r6
[ "$(tls_of r6 cacert_from)" = '"SSL_CERT_FILE"' ] || fail "SSL_CERT_FILE behind an empty CURL_CA_BUNDLE: $(tls_of r6 cacert_from)"
mkdir cadir
cp ca.pem "cadir/$(openssl x509 -hash -noout -in ca.pem).0"
SSL_CERT_DIR=$tmp/cadir check_exit 0 "" "$NEEDLE" run suite.json --base-url "$FAKE_URL" --out r7
[ "$(tls_of r7 capath)" = "\"$tmp/cadir\"" ] || fail "SSL_CERT_DIR not recorded: $(tls_of r7 capath)"
[ "$(tls_of r7 cacert)" = null ] || fail "cacert with SSL_CERT_DIR alone: $(tls_of r7 cacert)"
SSL_CERT_DIR=$tmp/nodir check_exit 2 "CA folder '$tmp/nodir' (SSL_CERT_DIR): No such file" \
	"$NEEDLE" run suite.json --base-url "$FAKE_URL" --out r8
check_one_line "missing CA folder"
# a CA "file" that is a FIFO is refused, not read (the run would hang)
mkfifo ca.fifo
SSL_CERT_FILE=$tmp/ca.fifo check_exit 2 "CA file '$tmp/ca.fifo' (SSL_CERT_FILE): not a regular file (a FIFO)" \
	"$NEEDLE" run suite.json --base-url "$FAKE_URL" --out r9
[ ! -e r8 ] && [ ! -e r9 ] || fail "a results folder was made for a bad CA file or folder"
echo "verdict_tls: ok"
