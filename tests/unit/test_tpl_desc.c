/*
 * test_tpl_desc — descriptor loading alone: every shipped descriptor by name
 * (style, name, SHA-256 of its bytes), the typed readers, shipped-name
 * lookup, and seeded mutations of every shipped descriptor (each load either
 * validates, and then renders or refuses, or fails with ERR_INPUT naming
 * the file; nothing leaks under ASan). Run from the repository root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/embed.h"
#include "base/io.h"
#include "tpl/tpl.h"
#include "tpl/tpl_desc.h"
#include "t.h"

static const char *const shipped[] = {"chatml", "deepseek-v3", "deepseek-v3.1", "deepseek-v3.2",
				      "deepseek-v4", "deepseek-v4.1", "llama3", "qwen3"};

/* Every hash `t` lists is written plainly in its text `raw` (what
 * tpl_desc_find_sha looks for before it parses a descriptor) and finds `t`. */
static void check_shas_found(const struct tpl_desc *t, const char *raw)
{
	const cJSON *s;

	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(t->root, "template_sha256")) {
		struct tpl_desc u;
		int found = 0;

		CHECK(strstr(raw, s->valuestring) != NULL);
		CHECK_EQ_LONG(tpl_desc_find_sha(&u, s->valuestring, &found, NULL), ERR_OK);
		CHECK(found && !strcmp(u.name, t->name));
		if (found)
			tpl_desc_release(&u);
	}
}

static void test_shipped(void)
{
	static const enum tpl_style styles[] = {TPL_STYLE_TURNS, TPL_STYLE_DSV3, TPL_STYLE_DSV31,
						TPL_STYLE_DSV32, TPL_STYLE_DSV4, TPL_STYLE_DSV41,
						TPL_STYLE_TURNS, TPL_STYLE_TURNS};
	size_t i;

	for (i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
		struct tpl_desc t;
		struct diag d;
		char key[64], sha[IO_SHA256_HEX];
		const struct embed_file *f;

		snprintf(key, sizeof key, "templates/%s.json", shipped[i]);
		f = embed_find(key);
		CHECK(f != NULL);
		CHECK(tpl_desc_shipped(shipped[i]));
		diag_init(&d);
		CHECK_EQ_LONG(tpl_desc_load(&t, shipped[i], &d), ERR_OK);
		if (!f || !t.root)
			continue;
		CHECK(!io_sha256_hex((const char *)f->data, f->len, sha, NULL));
		CHECK_STR(t.sha, sha);
		CHECK_STR(t.name, shipped[i]);
		CHECK_STR(t.origin, key);
		CHECK_EQ_LONG(t.style, styles[i]);
		check_shas_found(&t, (const char *)f->data);
		tpl_desc_release(&t);
		CHECK(t.root == NULL);
	}
	CHECK(!tpl_desc_shipped("no-such"));
	CHECK(!tpl_desc_shipped("../templates/qwen3"));
}

static void test_readers(void)
{
	cJSON *o = cJSON_Parse("{\"s\":\"x\",\"t\":true,\"f\":false,\"o\":{},\"n\":1}");

	CHECK_STR(tpl_desc_str(o, "s"), "x");
	CHECK_STR(tpl_desc_str(o, "n"), "");
	CHECK_STR(tpl_desc_str(NULL, "s"), "");
	CHECK(tpl_desc_true(o, "t") && !tpl_desc_true(o, "f") && !tpl_desc_true(o, "s"));
	CHECK(tpl_desc_obj(o, "o") != NULL && tpl_desc_obj(o, "s") == NULL && !tpl_desc_obj(NULL, "o"));
	cJSON_Delete(o);
}

static void test_load_errors(void)
{
	struct tpl_desc t;
	struct diag d;

	diag_init(&d);
	CHECK_EQ_LONG(tpl_desc_load(&t, "no-such", &d), ERR_USAGE);
	CHECK(strstr(d.msg, "'no-such'") && strstr(d.msg, "deepseek-v3.1"));
	CHECK(t.root == NULL && t.origin == NULL);
	diag_init(&d);
	CHECK_EQ_LONG(tpl_desc_load(&t, "/nonexistent/x.json", &d), ERR_IO);
	CHECK(strstr(d.msg, "/nonexistent/x.json") != NULL);
	tpl_desc_release(&t);
}

/* A descriptor that validates renders or refuses the message cleanly. */
static void render_loaded(const char *path, const cJSON *m, struct buf *out)
{
	struct tpl *t = NULL;
	struct diag d;
	enum err e;

	diag_init(&d);
	CHECK_EQ_LONG(tpl_load(path, &t, &d), ERR_OK);
	buf_reset(out);
	e = t ? tpl_render(t, m, NULL, NULL, 1, out, &d) : ERR_OK;
	CHECK(e == ERR_OK || e == ERR_INPUT);
	tpl_free(t);
}

/* Seeded byte flips, insertions and truncations of every shipped descriptor:
 * each load either succeeds and renders, or fails with ERR_INPUT and a
 * message naming the file; nothing crashes or leaks (ASan run). */
static void test_mutated_descriptors(void)
{
	static const char msgs[] = "[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"u\"}]";
	char path[] = "/tmp/needle-tpl-mut-XXXXXX.json";
	cJSON *m = cJSON_Parse(msgs);
	unsigned x = 12345;
	size_t i, k, failed = 0, loaded = 0;
	struct buf raw, out;
	int fd = mkstemps(path, 5);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	buf_init(&raw, 1 << 20);
	buf_init(&out, 1 << 20);
	for (i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
		struct buf name;
		const struct embed_file *f;

		buf_init(&name, 256);
		buf_printf(&name, "templates/%s.json", shipped[i]);
		f = embed_find(name.data);
		buf_release(&name);
		CHECK(f != NULL);
		for (k = 0; f && k < 60; k++) {
			struct tpl_desc t;
			struct diag d;
			FILE *fp;
			size_t pos, len = f->len;
			enum err e;

			buf_reset(&raw);
			buf_append(&raw, f->data, f->len);
			x = x * 1103515245u + 12345u;
			pos = (x >> 8) % len;
			switch (k % 3) {
			case 0: raw.data[pos] = (char)(raw.data[pos] ^ (1 << ((x >> 4) & 7))); break;
			case 1: buf_truncate(&raw, pos); break;
			default: raw.data[pos] = "{}[]\",:0tn\\"[(x >> 3) % 11]; break;
			}
			fp = fopen(path, "wb");
			CHECK(fp != NULL);
			if (!fp)
				break;
			fwrite(raw.data, 1, raw.len, fp);
			fclose(fp);
			diag_init(&d);
			e = tpl_desc_load(&t, path, &d);
			CHECK(e == ERR_OK || (e == ERR_INPUT && strstr(d.msg, path)));
			if (!e) {
				loaded++;
				CHECK(t.name && t.root && strlen(t.sha) == 64);
				tpl_desc_release(&t);
				render_loaded(path, m, &out);
			} else {
				failed++;
				CHECK(t.root == NULL && t.name == NULL && t.origin == NULL);
			}
		}
	}
	CHECK(failed > 0 && loaded > 0);
	remove(path);
	cJSON_Delete(m);
	buf_release(&raw);
	buf_release(&out);
}

int main(void)
{
	T_RUN(test_shipped);
	T_RUN(test_readers);
	T_RUN(test_load_errors);
	T_RUN(test_mutated_descriptors);
	return T_DONE();
}
