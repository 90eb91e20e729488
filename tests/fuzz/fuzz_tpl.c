/*
 * fuzz_tpl — the chat-template descriptor loader (harness/tpl/tpl.h): arbitrary
 * descriptor bytes through tpl_load, and every descriptor that loads renders a
 * fixed conversation (system, user, assistant with reasoning and a tool call,
 * tool result, user) with and without tools, kwargs and generation prompt.
 * Render errors are expected for some descriptors; memory errors are not.
 */
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "tmpfile.h"
#include "tpl/tpl.h"

static const char conversation[] =
	"[{\"role\":\"system\",\"content\":\"Be brief.\"},"
	"{\"role\":\"user\",\"content\":\"Weather in Lisbon?\"},"
	"{\"role\":\"assistant\",\"content\":\"\",\"reasoning_content\":\"need a tool\","
	"\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
	"{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Lisbon\\\"}\"}}]},"
	"{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"21.5 C, clear\"},"
	"{\"role\":\"assistant\",\"content\":\"It is 21.5 C.\"},"
	"{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\\u4f60\\u597d\"}]}]";
static const char tools_json[] =
	"[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
	"\"description\":\"Weather\",\"parameters\":{\"type\":\"object\",\"properties\":"
	"{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}]";
static const char kwargs_json[] = "{\"thinking\":true,\"enable_thinking\":true}";

static void render(const struct tpl *t, const cJSON *msgs, const cJSON *tools,
		   const cJSON *kwargs, int gen)
{
	struct buf out;
	struct diag d;

	diag_init(&d);
	buf_init(&out, (size_t)1 << 20);
	(void)tpl_render(t, msgs, tools, kwargs, gen, &out, &d);
	buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_tmp_write(data, size, ".json");
	cJSON *msgs = cJSON_Parse(conversation), *tools = cJSON_Parse(tools_json);
	cJSON *kwargs = cJSON_Parse(kwargs_json);
	struct tpl *t = NULL;
	struct diag d;

	diag_init(&d);
	if (!path || !msgs || !tools || !kwargs)
		abort();
	if (!tpl_load(path, &t, &d)) {
		if (!tpl_name(t) || !tpl_sha256(t))
			abort();
		render(t, msgs, NULL, NULL, 1);
		render(t, msgs, tools, kwargs, 0);
		render(t, cJSON_GetArrayItem(tools, 5), tools, NULL, 1); /* no messages */
	}
	tpl_free(t);
	cJSON_Delete(msgs);
	cJSON_Delete(tools);
	cJSON_Delete(kwargs);
	return 0;
}
