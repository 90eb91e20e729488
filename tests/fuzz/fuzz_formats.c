/*
 * fuzz_formats — the formats other tools read (harness/report/): the input's
 * first line is a run's manifest.json, the rest its results.jsonl, in a run
 * folder of this process. When report reads the folder, each writer's output
 * must parse with its consumer's rules, whatever bytes the records hold:
 *   summary.json  cJSON parses it;
 *   summary.md    no control character but tab and line feed (base/ctl.h);
 *   attempts.csv  RFC 4180: every record has the header's number of fields;
 *   JUnit         well-formed XML 1.0: UTF-8, only XML characters, references
 *                 that exist, tags that nest, one root;
 *   Prometheus    the text exposition: HELP/TYPE comments and samples
 *                 NAME{LABEL="VALUE",...} NUMBER, values escaped, UTF-8.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/ctl.h"
#include "base/utf8.h"
#include "report/format.h"
#include "report/prom.h"
#include "report/report.h"

static char dir[4096];

static void remove_dir(void)
{
	static const char *const files[] = {"manifest.json", "results.jsonl", "summary.json",
					    "summary.md", "attempts.csv", "recall.png", "load.png"};
	char p[4200];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void put(const char *name, const uint8_t *data, size_t size)
{
	char p[4200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(f = fopen(p, "wb")) || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
}

/* ---- XML 1.0, as far as JUnit's readers need ---- */

static int xml_char(uint32_t c)
{
	return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
	       (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

/* A reference at s ("&...;"): its length, 0 when it is none XML knows. */
static size_t xml_ref(const char *s)
{
	static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
	size_t i = 2;

	for (size_t k = 0; k < 5; k++)
		if (!strncmp(s, named[k], strlen(named[k])))
			return strlen(named[k]);
	if (s[1] != '#')
		return 0;
	if (s[2] == 'x')
		for (i = 3; isxdigit((unsigned char)s[i]); i++)
			;
	else
		for (; isdigit((unsigned char)s[i]); i++)
			;
	return s[i] == ';' && i > (size_t)(s[2] == 'x' ? 3 : 2) ? i + 1 : 0;
}

static int name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == ':';
}

static void check_xml(const char *s, size_t n)
{
	const char *stack[64], *p = s, *end = s + n;
	size_t depth = 0, roots = 0, i;
	uint32_t c;

	if (!utf8_valid(s, n))
		abort();
	for (i = 0; i < n; i += utf8_decode(s + i, n - i, &c))
		if (utf8_decode(s + i, n - i, &c), !xml_char(c))
			abort();
	if (!strncmp(p, "<?xml ", 6) && !(p = strstr(p, "?>")))
		abort();
	p = p == s ? s : p + 2;
	while (p < end) {
		if (*p == '&') {
			if (!xml_ref(p))
				abort();
			p += xml_ref(p);
		} else if (*p == '>') {
			abort();
		} else if (*p != '<') {
			if (!depth && !isspace((unsigned char)*p))
				abort(); /* text outside the root */
			p++;
		} else if (p[1] == '/') { /* </name> */
			const char *q = p + 2;
			while (name_char(*q))
				q++;
			if (!depth || *q != '>' || (size_t)(q - p - 2) != strcspn(stack[depth - 1], " \t\n/>") ||
			    strncmp(p + 2, stack[depth - 1], (size_t)(q - p - 2)))
				abort();
			depth--;
			p = q + 1;
		} else { /* <name (attr="value")* /?> */
			const char *q = p + 1, *name = q;
			while (name_char(*q))
				q++;
			if (q == name)
				abort();
			for (;;) {
				while (*q == ' ' || *q == '\n' || *q == '\t')
					q++;
				if (*q == '>' || (*q == '/' && q[1] == '>'))
					break;
				const char *an = q;
				while (name_char(*q))
					q++;
				if (q == an || *q++ != '=' || *q++ != '"')
					abort();
				while (*q != '"') {
					if (q >= end || *q == '<')
						abort();
					if (*q == '&' && !xml_ref(q))
						abort();
					q += *q == '&' ? xml_ref(q) : 1;
				}
				q++;
			}
			if (!depth && roots++)
				abort(); /* a second root */
			if (*q == '/') {
				q += 2;
			} else {
				if (depth == 64)
					abort();
				stack[depth++] = name;
				q++;
			}
			p = q;
		}
	}
	if (depth || roots != 1)
		abort();
}

/* ---- Prometheus text exposition ---- */

static void check_prom(const char *s, size_t n)
{
	const char *p = s, *end = s + n;

	if (!utf8_valid(s, n))
		abort();
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p;
		char *num_end;

		if (!eol)
			abort(); /* every line ends */
		if (*p == '#') {
			if (strncmp(p, "# HELP ", 7) && strncmp(p, "# TYPE ", 7))
				abort();
			p = eol + 1;
			continue;
		}
		if (!(isalpha((unsigned char)*q) || *q == '_' || *q == ':'))
			abort();
		while (isalnum((unsigned char)*q) || *q == '_' || *q == ':')
			q++;
		if (*q == '{') {
			q++;
			while (*q != '}') {
				if (!(isalpha((unsigned char)*q) || *q == '_'))
					abort();
				while (isalnum((unsigned char)*q) || *q == '_')
					q++;
				if (*q++ != '=' || *q++ != '"')
					abort();
				while (*q != '"') {
					if (q >= eol)
						abort(); /* a raw line feed, or no end */
					if (*q == '\\' && !strchr("\\\"n", q[1]))
						abort();
					q += *q == '\\' ? 2 : 1;
				}
				q++;
				if (*q == ',')
					q++;
				else if (*q != '}')
					abort();
			}
			q++;
		}
		if (*q++ != ' ')
			abort();
		strtod(q, &num_end);
		if (num_end != eol)
			abort();
		p = eol + 1;
	}
}

/* ---- CSV (RFC 4180) ---- */

static void check_csv(const char *s, size_t n)
{
	size_t i = 0, fields = 1, want = 0;

	while (i < n) {
		if (s[i] == '"') {
			for (i++;; i++) {
				if (i >= n)
					abort(); /* a quote never closed */
				if (s[i] == '"' && i + 1 < n && s[i + 1] == '"')
					i++;
				else if (s[i] == '"')
					break;
			}
			i++;
			if (i < n && s[i] != ',' && s[i] != '\n' && s[i] != '\r')
				abort(); /* text after a closing quote */
			continue;
		}
		if (s[i] == ',') {
			fields++;
		} else if (s[i] == '\n') {
			if (want && fields != want)
				abort();
			want = want ? want : fields;
			fields = 1;
		}
		i++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	const struct report_format *junit = report_format_named("junit");
	struct report_also also = {0};
	struct report_run *r = NULL;
	struct report_files f;
	struct buf out;
	struct diag d;
	cJSON *j;

	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		struct stat st;

		if (!t || !*t)
			t = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
		snprintf(dir, sizeof(dir), "%s/needle-fuzz-formats-%ld", t, (long)getpid());
		mkdir(dir, 0700);
		atexit(remove_dir);
	}
	if (!nl)
		return 0;
	put("manifest.json", data, (size_t)(nl - data));
	put("results.jsonl", nl + 1, size - (size_t)(nl + 1 - data));
	diag_init(&d);
	buf_init(&out, BUF_MAX_DEFAULT);
	if (junit->fold(&out, &also, &d) || report_load(dir, &also, &r, &d)) {
		buf_release(&out);
		return 0;
	}
	if (report_render(r, &f, &d)) {
		report_run_free(r);
		buf_release(&out);
		return 0;
	}
	if (!(j = cJSON_ParseWithLength(f.json.data, f.json.len)))
		abort();
	cJSON_Delete(j);
	if (ctl_first(f.md.data, f.md.len) != f.md.len)
		abort();
	check_csv(f.csv.data, f.csv.len);
	if (!prom_write(&f.summary, &out, &d))
		check_prom(out.data, out.len);
	buf_reset(&out);
	if (!junit->write(r, &f, &out, &d)) /* from what its fold gathered in the load's pass */
		check_xml(out.data, out.len);
	buf_release(&out);
	report_files_release(&f);
	report_run_free(r);
	return 0;
}
