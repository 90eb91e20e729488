#!/bin/sh
# Writes C source that embeds the given files: tests/embed.sh PREFIX=DIR... > out.c
# Each argument is NAME_PREFIX=DIRECTORY; every regular file in DIRECTORY becomes
# an entry "NAME_PREFIX/FILE" of embed_table (see harness/base/embed.h).
set -eu
echo '#include <stddef.h>'
echo '#include "base/embed.h"'
n=0
names=""
for spec in "$@"; do
	prefix=${spec%%=*}
	dir=${spec#*=}
	for f in $(ls "$dir" 2>/dev/null | LC_ALL=C sort); do
		[ -f "$dir/$f" ] || continue
		echo "static const unsigned char f$n[] = {"
		od -An -v -tu1 "$dir/$f" | sed 's/  */,/g; s/^,//; s/$/,/'
		echo "0};"
		names="$names $prefix/$f=$n=$(wc -c < "$dir/$f")"
		n=$((n + 1))
	done
done
echo "const struct embed_file embed_table[] = {"
for e in $names; do
	name=${e%%=*}; rest=${e#*=}; idx=${rest%%=*}; len=${rest#*=}
	echo "	{\"$name\", f$idx, $len},"
done
echo "	{NULL, NULL, 0}"
echo "};"
echo "const size_t embed_count = $n;"
