/*
 * needle merge — joins the folders of a sharded run (needle run --shard, a
 * Slurm array or a Kubernetes Indexed Job) into one run folder (merge.h), then
 * writes its report as `needle report` would.
 */
#include <stdio.h>

#include "base/buf.h"
#include "cli.h"
#include "cmd.h"
#include "report/merge.h"
#include "report/report.h"

static const char examples[] =
	"  needle merge results/grid results/grid-0 results/grid-1 results/grid-2 results/grid-3\n"
	"  needle merge /shared/merged /shared/shard-*\n"
	"  needle diff results/grid-whole results/grid --gate no_new_failures\n"
	"\n"
	"Every shard must have run the same suite (SHA-256), tokenizer, template,\n"
	"endpoint, served model and server version; shards 0..N-1 must each be given\n"
	"once and be complete (each incomplete one is named; resume it, or pass\n"
	"--allow-partial). An attempt recorded in two shards is an error unless both\n"
	"records are identical (one is dropped and counted). Records are concatenated,\n"
	"never averaged. Shards that ran load cases together (each its part of the\n"
	"rate or concurrency) must have begun each round within --max-skew of each\n"
	"other and sent on time (scheduling-lag P99 within it too); global\n"
	"concurrency is then a bound, as the merged manifest and report say.\n"
	"A shard's files are never followed: a symbolic link, FIFO or device in\n"
	"place of its manifest.json, results.jsonl or a raw/ file is refused by name.\n"
	"OUT must not hold results yet; --force replaces an earlier merge there (a\n"
	"merge job that is retried), never a run.\n"
	"Exit 0 when merged; 2 with the list of missing, foreign, incomplete or\n"
	"out-of-step shards (nothing is written then).\n";

static void show(const struct merge_stats *st, const char *out)
{
	fprintf(stderr, "needle merge: %ld shards, %zu records", st->shards, st->records);
	if (st->duplicates)
		fprintf(stderr, ", %zu identical duplicates dropped", st->duplicates);
	if (st->incomplete)
		fprintf(stderr, ", %zu incomplete shards (--allow-partial)", st->incomplete);
	fprintf(stderr, "; merged run in %s\n", out);
	if (st->load.shards)
		fprintf(stderr,
			"needle merge: load cases ran on %zu shards at once; rounds began within %.0f ms, scheduling-lag P99 at most %.0f ms; global concurrency is a bound (the sum of the shards'), not a measurement\n",
			st->load.shards, st->load.skew_ms, st->load.lag_p99_ms);
	else if (st->max_lag_ms >= 0)
		fprintf(stderr,
			"needle merge: shards started within %.0f ms of --start-at; concurrency across shards is a bound (each shard saw only its own requests)\n",
			st->max_lag_ms);
}

int cmd_merge(int argc, char **argv)
{
	int partial = 0, force = 0;
	double skew_s = MERGELOAD_SKEW_MS / 1000.0;
	const struct cli_opt opts[] = {
		{"allow-partial", 0, CLI_FLAG, NULL, "merge incomplete shards too (they are counted in the manifest)", &partial},
		{"force", 0, CLI_FLAG, NULL, "OUT may hold an earlier merge (a retried merge job): it is replaced; a folder holding a run that is not a merge is still refused", &force},
		{"max-skew", 0, CLI_DOUBLE, "SEC", "load shards: how far apart their rounds may begin and how late they may send (scheduling-lag P99); default 1", &skew_s},
	};
	const struct cli_cmd cmd = {
		"merge", "OUT SHARD_DIR... [--allow-partial] [--force] [--max-skew SEC]",
		"Join the run folders of the shards of one run into OUT, a run folder that\n"
		"'needle report' and 'needle diff --gate' read as if it had run on one\n"
		"machine: the shards are checked to belong together, their records copied\n"
		"and raw response files linked (copied across filesystems), and OUT's\n"
		"report is written.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 2, -1,
		CLI_EXIT_PASS | CLI_EXIT_USAGE};
	struct merge_opts mo;
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	struct merge_stats st;
	struct buf problems;
	struct diag d;
	int status = EXIT_PASS;

	diag_init(&d);
	buf_init(&problems, 1 << 20);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	mo = (struct merge_opts){partial, force, skew_s * 1000.0};
	if (!d.code && outcome != CLI_HELP_SHOWN && !(skew_s > 0 && skew_s <= 3600))
		diag_fail(&d, ERR_USAGE, "option '--max-skew' wants more than 0 and at most 3600 seconds");
	if (!d.code && outcome != CLI_HELP_SHOWN &&
	    !merge_shards(args[0], args + 1, (size_t)nargs - 1,
			  &mo, &st, &problems, &d) &&
	    !report_write(args[0], NULL, &d))
		show(&st, args[0]);
	if (d.code && problems.len > 0) {
		fprintf(stderr, "needle merge: the shards do not make one run:\n");
		cli_quote(stderr, problems.data);
	}
	if (d.code)
		status = cli_report("merge", &d);
	buf_release(&problems);
	return status;
}
