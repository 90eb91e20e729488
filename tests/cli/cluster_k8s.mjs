// The checks of tests/cli/cluster_files.sh on the Kubernetes manifests of a
// folder (argument): each validates against the API schema
// (kubernetes-models), a planted mistake in each is refused, and the Jobs
// carry what docs/cluster.md says they do. Prints the files checked.
import fs from "fs";
import path from "path";
import yaml from "js-yaml";
import { Job } from "kubernetes-models/batch/v1";
import { PersistentVolumeClaim } from "kubernetes-models/v1";

const dir = process.argv[2];
const kinds = { Job, PersistentVolumeClaim };
const load = (f) => yaml.load(fs.readFileSync(path.join(dir, f), "utf8"));
const check = (f, o) => { const K = kinds[o.kind]; if (!K) throw new Error(`${f}: kind ${o.kind}`); new K(o).validate(); };
const refused = (f, o, what) => {
	try { check(f, o); } catch (e) { return; }
	throw new Error(`${f}: the schema accepted ${what}`);
};
const must = (f, ok, what) => { if (!ok) throw new Error(`${f}: ${what}`); };
const files = fs.readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort();
for (const f of files) {
	const o = load(f);
	check(f, o);
	const bad = load(f);
	bad.spec.resources ? (bad.spec.accessModes = "ReadWriteMany") : (bad.spec.template.spec.restartPolicy = 7);
	refused(f, bad, "a planted mistake");
	if (o.kind !== "Job") continue;
	const s = o.spec, p = s.template.spec, c = p.containers[0], sc = c.securityContext;
	must(f, o.metadata.generateName && !o.metadata.name, "generateName, not a fixed name");
	must(f, s.ttlSecondsAfterFinished > 0, "ttlSecondsAfterFinished");
	must(f, /@sha256:[0-9a-f]{64}$/.test(c.image) && /^[a-z0-9.-]+\.[a-z]+\//.test(c.image), "an image by digest from a registry");
	must(f, c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory, "requests and limits");
	must(f, p.securityContext.runAsNonRoot === true && p.securityContext.seccompProfile.type === "RuntimeDefault" &&
		sc.allowPrivilegeEscalation === false && sc.capabilities.drop.includes("ALL"), "a restricted securityContext");
	const script = c.args.join("\n");
	if (o.spec.completionMode === "Indexed") {
		const rules = s.podFailurePolicy.rules;
		must(f, s.podReplacementPolicy === "Failed" && s.backoffLimitPerIndex >= 0 && s.parallelism === s.completions,
			"Indexed: podReplacementPolicy Failed, backoffLimitPerIndex, parallelism = completions");
		must(f, rules.some((r) => r.action === "FailIndex" && r.onExitCodes &&
			(r.onExitCodes.operator === "In" ? r.onExitCodes.values.includes(2) : !r.onExitCodes.values.includes(2))),
			"FailIndex on exit 2");
		must(f, /--shard "\$JOB_COMPLETION_INDEX\/\$SHARDS"/.test(script) && /\[ "\$st" -le 1 \] \|\| exit "\$st"/.test(script),
			"--shard from the index, exit status kept above 1");
		if (f === "load.yaml") must(f, /--start-at/.test(script), "--start-at");
		else must(f, rules[0].action === "Ignore" && rules[0].onPodConditions[0].type === "DisruptionTarget" &&
			!rules.some((r) => r.action === "FailIndex" && r.onExitCodes.values.includes(5)) && /--resume/.test(script),
			"Ignore DisruptionTarget, retry exit 5 with --resume");
	} else {
		must(f, s.backoffLimit === 0 && /needle merge --force/.test(script), "merge: backoffLimit 0 and --force");
	}
}
console.log(files.join(" "));