#!/bin/sh
# The set-up step the Makefile calls.
#   sh tests/setup.sh system   Debian packages needed to build (and to test)
#   sh tests/setup.sh npm      npm packages the tests need, into tests/node_modules
# Run as root, it installs what is missing with apt-get. Run as another user with
# something missing, it prints the exact command to run and exits 2.
set -eu

PACKAGES="build-essential g++ pkg-config libcurl4-openssl-dev libcjson-dev \
libpcre2-dev libsentencepiece-dev sentencepiece libpng-dev zlib1g-dev \
libssl-dev libutf8proc-dev nodejs npm"

here=$(cd "$(dirname "$0")" && pwd)

missing_packages() {
	for p in $PACKAGES; do
		if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			echo "$p"
		fi
	done
}

system() {
	missing=$(missing_packages | tr '\n' ' ')
	[ -z "$missing" ] && return 0
	# node and npm may come from elsewhere than Debian (e.g. a newer build).
	if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
		missing=$(echo "$missing" | sed 's/\bnodejs\b//; s/\bnpm\b//')
		[ -z "$(echo "$missing" | tr -d ' ')" ] && return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "needle: missing Debian packages; run as root:" >&2
		echo "  apt-get update && apt-get install -y $missing" >&2
		exit 2
	fi
	echo "needle: installing Debian packages: $missing" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
}

npm_deps() {
	stamp="$here/node_modules/.needle-stamp"
	if [ -f "$stamp" ] && [ ! "$here/package-lock.json" -nt "$stamp" ]; then
		return 0
	fi
	echo "needle: installing the test's npm packages into tests/node_modules" >&2
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
	touch "$stamp"
}

case "${1:-}" in
system) system ;;
npm) npm_deps ;;
*) echo "usage: sh tests/setup.sh system|npm" >&2; exit 2 ;;
esac
