/*
 * fuzz_model — the model-folder reader (harness/tpl/tpl_model.h): what a
 * folder from a hub holds. The input is split at its first two NUL bytes into
 * tokenizer_config.json, chat_template.json and chat_template.jinja (a part
 * left out is a file left out), written into a folder beside a
 * tokenizer.json; the folder is read (tpl_model_open) and tokenizer_config.json
 * read as a --template file for requests with and without tools. Whatever the
 * bytes, a read ends with a result or a message, and a folder that opened
 * names its tokenizer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/io.h"
#include "tpl/tpl_model.h"

static const char *const names[] = {"tokenizer_config.json", "chat_template.json",
				    "chat_template.jinja"};
static char dir[4096], path[3][4200], tok[4200];

static void cleanup(void)
{
	size_t i;

	for (i = 0; i < 3; i++)
		unlink(path[i]);
	unlink(tok);
	rmdir(dir);
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	struct stat st;
	struct diag d;
	size_t i;

	if (!t || !*t)
		t = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/needle-fuzz-model-%ld", t, (long)getpid());
	mkdir(dir, 0700);
	for (i = 0; i < 3; i++)
		snprintf(path[i], sizeof(path[i]), "%s/%s", dir, names[i]);
	snprintf(tok, sizeof(tok), "%s/tokenizer.json", dir);
	diag_init(&d);
	if (io_write_file(tok, "{}", 2, &d))
		abort();
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct tpl_model m;
	struct tpl_text t;
	struct diag d;
	size_t i;

	if (!dir[0])
		setup();
	for (i = 0; i < 3; i++) {
		const uint8_t *nul = i < 2 && p <= end ? memchr(p, 0, (size_t)(end - p)) : NULL;
		const uint8_t *stop = nul ? nul : end;

		diag_init(&d);
		if (p <= end && (stop > p || i == 0)) {
			if (io_write_file(path[i], p, (size_t)(stop - p), &d))
				abort();
		} else {
			unlink(path[i]);
		}
		p = stop + 1;
	}
	diag_init(&d);
	if (!tpl_model_open(&m, dir, &d) && (!m.tokenizer || !strstr(m.tokenizer, "tokenizer.json")))
		abort();
	tpl_model_release(&m);
	for (i = 0; i < 2; i++) {
		memset(&t, 0, sizeof(t));
		diag_init(&d);
		if (!tpl_model_template_file(&t, path[0], (int)i, &d) && !t.text)
			abort();
		tpl_text_release(&t);
	}
	return 0;
}
