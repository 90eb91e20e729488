#!/bin/sh
# Issue 24.6: the shipped cluster files. deploy/k8s/*.yaml validate against the
# Kubernetes API schema (the kubernetes-models package, offline), and a
# planted mistake in each is refused (so the check can fail); the Jobs carry
# what a platform team asks for (podFailurePolicy on needle's exit statuses,
# podReplacementPolicy: Failed, backoffLimitPerIndex, generateName, a TTL,
# requests and limits, a restricted securityContext, an image by digest;
# the merge Job backoffLimit 0 and --force; the load Job parallelism =
# completions and --start-at). docs/cluster.md's Slurm files are
# deploy/slurm/'s byte for byte, and every shipped script parses. The
# Dockerfile is built when docker is there.
set -eu
. "$TESTS/lib/cli.sh"
. "$TESTS/lib/recipe.sh"
for f in shard.sbatch merge.sbatch load.sbatch; do
	recipe_file "deploy/slurm/$f" >"$tmp/$f"
	cmp -s "$tmp/$f" "$ROOT/deploy/slurm/$f" || fail "docs/cluster.md's $f is not deploy/slurm/$f"
done
for f in "$ROOT"/deploy/slurm/* "$ROOT"/deploy/k8s/needle-k8s; do
	case $f in *.yaml) continue ;; esac
	sh -n "$f" || fail "$f does not parse"
done
[ -n "$(recipe slurm-submit)" ] && [ -n "$(recipe slurm-one-step)" ] && [ -n "$(recipe slurm-retry)" ] ||
	fail "docs/cluster.md lacks a Slurm recipe block"
node "$TESTS/cli/cluster_k8s.mjs" "$ROOT/deploy/k8s" >"$tmp/k8s" || fail "deploy/k8s"
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
	docker build -q -t needle-test-image "$ROOT" >/dev/null || fail "docker build"
	docker run --rm needle-test-image needle suites >/dev/null || fail "the image's needle"
	built="the Dockerfile built and ran"
else
	built="no docker here: the Dockerfile was not built"
fi
echo "cluster files: $(cat "$tmp/k8s") valid against the API schema; Slurm files as documented; $built"
