/*
 * fuzz_config — the config file (harness/cli/config.h): the input's first
 * byte says whether the file was named (odd) or found (even), the rest is the
 * file, applied to a command with an option of every kind (those a found file
 * may not set among them). Properties: a file is refused with a message that
 * names it, or the arguments it adds parse with the command line's own parser
 * (cli_parse), any value it refuses reported against the file's key
 * (config_blame); and a found file never adds --base-url, --endpoints,
 * --api-key-env, --cacert or --insecure.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cli/cli.h"
#include "cli/config.h"

static const char *const guarded[] = {"--base-url", "--endpoints", "--api-key-env", "--cacert",
				      "--insecure"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cli_list urls, cases;
	static const char *endpoints, *key, *cacert, *model;
	static int insecure, json;
	static long concurrency;
	static double timeout;
	const struct cli_opt opts[] = {
		{"base-url", 0, CLI_LIST, "URL", "", &urls},
		{"endpoints", 0, CLI_STR, "FILE", "", &endpoints},
		{"api-key-env", 0, CLI_STR, "NAME", "", &key},
		{"cacert", 0, CLI_STR, "FILE", "", &cacert},
		{"insecure", 0, CLI_FLAG, NULL, "", &insecure},
		{"model", 'm', CLI_STR, "NAME", "", &model},
		{"concurrency", 'c', CLI_LONG, "N", "", &concurrency},
		{"timeout", 0, CLI_DOUBLE, "SEC", "", &timeout},
		{"case", 0, CLI_LIST, "GLOB", "", &cases},
		{"json", 0, CLI_FLAG, NULL, "", &json},
	};
	const struct cli_cmd cmd = {"run", "", "", opts, sizeof(opts) / sizeof(opts[0]), NULL, 0, -1, 0};
	const char *args[2 * CLI_ARGS_MAX + 1];
	char *none[] = {NULL}, **argv = none;
	int argc = 0, nargs, outcome, named = size && (data[0] & 1), i;
	size_t g, n;
	struct buf help;
	struct diag d;

	if (!size)
		return 0;
	memset(&urls, 0, sizeof(urls));
	memset(&cases, 0, sizeof(cases));
	diag_init(&d);
	if (config_load_text("fuzz.json", named, (const char *)data + 1, size - 1, &d) ||
	    config_args(&cmd, &argc, &argv, &d)) {
		if (strncmp(d.msg, "config 'fuzz.json'", 18))
			abort(); /* a refusal names the file */
		return 0;
	}
	for (i = 0; !named && i < argc; i++)
		for (g = 0; g < sizeof(guarded) / sizeof(guarded[0]); g++)
			if (!strcmp(argv[i], guarded[g]))
				abort(); /* a found file chose the endpoint, the key or TLS */
	buf_init(&help, 1 << 16);
	diag_init(&d);
	if (cli_parse(&cmd, argc, argv, args, &nargs, &outcome, &help, &d)) {
		/* only a value can be refused, and then as the file's key */
		n = strncmp(d.msg, "option '--", 10) ? 0 : strcspn(d.msg + 10, "'");
		if (!n || !config_blame(d.msg + 10, n))
			abort();
	} else if (nargs || outcome != CLI_RUN) {
		abort(); /* the file added a positional argument or asked for help */
	}
	buf_release(&help);
	return 0;
}
