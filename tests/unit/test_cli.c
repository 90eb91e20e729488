/* Unit tests of the option tables (harness/cli/cli.h): parsing, lists, help. */
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "cli/cli.h"
#include "t.h"

static void test_cli(void)
{
	const char *name = NULL;
	long n = 0;
	int flag = 0, nargs, outcome;
	const char *args[8];
	struct cli_opt opts[] = {
		{"name", 'n', CLI_STR, "NAME", "a name", &name},
		{"count", 0, CLI_LONG, "N", "a number", &n},
		{"json", 0, CLI_FLAG, NULL, "a flag", &flag},
	};
	struct cli_cmd cmd = {"x", "[FILE]", "Test.", opts, 3, NULL, 0, 1};
	char *ok[] = {"--count=12", "file", "-n", "abc", "--json"};
	char *bad[] = {"--count", "12x"};
	char *unknown[] = {"--nope"};
	char *help[] = {"--help"};
	struct buf h;
	struct diag d;

	buf_init(&h, 1 << 16);
	diag_init(&d);
	CHECK(cli_parse(&cmd, 5, ok, args, &nargs, &outcome, &h, &d) == ERR_OK);
	CHECK(n == 12 && flag == 1 && nargs == 1);
	CHECK_STR(name, "abc");
	CHECK_STR(args[0], "file");
	CHECK(cli_parse(&cmd, 2, bad, args, &nargs, &outcome, &h, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "'--count' wants an integer") != NULL);
	diag_init(&d);
	CHECK(cli_parse(&cmd, 1, unknown, args, &nargs, &outcome, &h, &d) == ERR_USAGE);
	CHECK_STR(d.msg, "unknown option '--nope'");
	diag_init(&d);
	CHECK(cli_parse(&cmd, 1, help, args, &nargs, &outcome, &h, &d) == ERR_OK);
	CHECK(outcome == CLI_HELP_SHOWN);
	CHECK(strstr(h.data, "--count N") && strstr(h.data, "Exit status"));
	buf_release(&h);
}

static void test_cli_list(void)
{
	struct cli_list gates = {{0}, 0};
	struct cli_opt opts[] = {
		{"gate", 'g', CLI_LIST, "SPEC", "repeatable", &gates},
	};
	struct cli_cmd cmd = {"x", "", "Test.", opts, 1, NULL, 0, 0};
	char *ok[] = {"--gate", "a>=1", "-g", "b", "--gate=c"};
	char *many[CLI_LIST_MAX + 1];
	const char *args[CLI_LIST_MAX + 1];
	int nargs, outcome, i;
	struct buf h;
	struct diag d;

	buf_init(&h, 1 << 16);
	diag_init(&d);
	CHECK(cli_parse(&cmd, 5, ok, args, &nargs, &outcome, &h, &d) == ERR_OK);
	CHECK_EQ_LONG(gates.n, 3);
	CHECK_STR(gates.v[0], "a>=1");
	CHECK_STR(gates.v[2], "c");
	gates.n = 0;
	for (i = 0; i <= CLI_LIST_MAX; i++)
		many[i] = "--gate=x";
	CHECK(cli_parse(&cmd, CLI_LIST_MAX + 1, many, args, &nargs, &outcome, &h, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "given more than") != NULL);
	buf_release(&h);
}

/* An option with choices takes only those, names them all when given
 * another, and shows them as its metavar and in --help=values. */
static void test_cli_choices(void)
{
	static const char *const two[] = {"md", "json", NULL}, *const three[] = {"a", "b", "c", NULL};
	const char *fmt = "md", *x = NULL;
	struct cli_opt opts[] = {
		{"format", 'f', CLI_STR, NULL, "what", &fmt, two},
		{"x", 0, CLI_STR, NULL, "which", &x, three},
	};
	struct cli_cmd cmd = {"y", "", "Test.", opts, 2, NULL, 0, 0};
	char *ok[] = {"-f", "json", "--x=c"}, *bad[] = {"--format", "xml"}, *bad3[] = {"--x", "d"};
	char *help[] = {"--help"}, *values[] = {"--help=values"};
	const char *args[4];
	int nargs, outcome;
	struct buf h;
	struct diag d;

	buf_init(&h, 1 << 16);
	diag_init(&d);
	CHECK(cli_parse(&cmd, 3, ok, args, &nargs, &outcome, &h, &d) == ERR_OK);
	CHECK_STR(fmt, "json");
	CHECK_STR(x, "c");
	CHECK(cli_parse(&cmd, 2, bad, args, &nargs, &outcome, &h, &d) == ERR_USAGE);
	CHECK_STR(d.msg, "option '--format' wants md or json, got 'xml'");
	diag_init(&d);
	CHECK(cli_parse(&cmd, 2, bad3, args, &nargs, &outcome, &h, &d) == ERR_USAGE);
	CHECK_STR(d.msg, "option '--x' wants a, b or c, got 'd'");
	CHECK(cli_parse(&cmd, 1, help, args, &nargs, &outcome, &h, &d) == ERR_OK);
	CHECK(strstr(h.data, "-f, --format md|json ") != NULL && strstr(h.data, "--x a|b|c ") != NULL);
	buf_reset(&h);
	CHECK(cli_parse(&cmd, 1, values, args, &nargs, &outcome, &h, &d) == ERR_OK);
	CHECK_STR(h.data, "--format md\n--format json\n--x a\n--x b\n--x c\n");
	buf_release(&h);
}

int main(void)
{
	T_RUN(test_cli);
	T_RUN(test_cli_list);
	T_RUN(test_cli_choices);
	return T_DONE();
}
