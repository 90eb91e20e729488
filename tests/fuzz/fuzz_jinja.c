/*
 * fuzz_jinja — the Jinja interpreter (harness/jinja/jinja.h): the input is a
 * template (up to a first NUL byte) and, after it, a JSON object of extra
 * variables; the template is lexed, parsed and rendered with a fixed
 * conversation (system, user, assistant with reasoning and a parsed tool
 * call, tool result, user with content parts), tools, special tokens and the
 * extra variables, with the default step and work budgets, 256 MiB of values,
 * 16 MiB of output and a quarter second of wall clock (so that a hostile
 * seed that runs into no other budget ends that fast under the sanitizers,
 * leaving `make test`'s short replay time to mutate). The seeds include
 * hostile ones (hostile-*.jinja): values nested past JV_MAX_DEPTH, chains of
 * filters, operators and elifs past what CPython compiles, deep blocks and
 * loops, huge repetitions and indents, scans that exhaust the work budget,
 * and every builtin. Refusals and rejections are expected; memory errors,
 * crashes and a failed render that leaves bytes in the output are not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jinja/jinja.h"

static const char messages[] =
	"[{\"role\":\"system\",\"content\":\"Be brief.\"},"
	"{\"role\":\"user\",\"content\":\"Weather in Lisbon? \\u00e9\\ud83d\\ude00\"},"
	"{\"role\":\"assistant\",\"content\":\"\",\"reasoning_content\":\"need a tool\","
	"\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
	"{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Lisbon\",\"n\":1.0,\"1\":12345678901234567890}}}]},"
	"{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"21.5 C, clear\"},"
	"{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\\u4f60\\u597d\"}]}]";
static const char tools[] =
	"[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
	"\"description\":null,\"parameters\":{\"type\":\"object\",\"properties\":"
	"{\"city\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}},\"required\":[\"city\"]}}}]";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *src = (const char *)data, *nul = memchr(data, 0, size);
	size_t tlen = nul ? (size_t)(nul - src) : size;
	struct jinja_ctx *c = jinja_ctx_new();
	struct diag d;
	struct buf out;
	struct tm tm = { .tm_year = 124, .tm_mon = 6, .tm_mday = 26, .tm_hour = 12, .tm_wday = 5 };

	if (!c)
		abort();
	diag_init(&d);
	buf_init(&out, (size_t)16 << 20);
	jinja_ctx_memory(c, (size_t)256 << 20);
	jinja_ctx_time(c, 0.25);
	jinja_ctx_clock(c, &tm);
	if (jinja_ctx_set_json(c, "messages", messages, sizeof(messages) - 1, &d) ||
	    jinja_ctx_set_json(c, "tools", tools, sizeof(tools) - 1, &d) ||
	    jinja_ctx_set_bool(c, "add_generation_prompt", 1, &d) ||
	    jinja_ctx_set_str(c, "bos_token", "<s>", 3, &d) ||
	    jinja_ctx_set_none(c, "documents", &d))
		abort();
	if (nul)
		(void)jinja_ctx_merge_json(c, nul + 1, size - tlen - 1, &d);
	diag_init(&d);
	if (buf_putc(&out, 'x'))
		abort();
	if (jinja_render(src, tlen, c, &out, &d) && (out.len != 1 || !d.msg[0]))
		abort();
	buf_release(&out);
	jinja_ctx_free(c);
	return 0;
}
