# The recipes of docs/cluster.md, as written there, for tests/cli/slurm.sh and
# tests/cli/cluster_files.sh (sourced; needs ROOT and tmp):
#   recipe_file PATH      the fenced block after "<!-- file: PATH -->"
#   recipe NAME           the fenced block after "<!-- recipe: NAME -->"
recipe_block() { # MARKER
	awk -v m="$1" '
		$0 == m { want = 1; next }
		want && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$ROOT/docs/cluster.md"
}
recipe_file() {
	recipe_block "<!-- file: $1 -->"
}
recipe() {
	recipe_block "<!-- recipe: $1 -->"
}
