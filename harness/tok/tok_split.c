#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "tok_split.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "tok_int.h"
#include "uni.h"
#include "base/utf8.h"

static int stage_ok(const struct tok_pre *p)
{
	switch (p->kind) {
	case PRE_SPLIT:
		return p->re.scan != SCAN_NONE &&
		       ((p->behavior == B_ISOLATED && !p->invert) ||
			(p->behavior == B_REMOVED && p->invert));
	case PRE_BYTELEVEL:
		return !p->add_prefix_space && !p->use_regex;
	default:
		return 0;
	}
}

int tok_split_ok(const struct tok_hf *h)
{
	size_t i;

	for (i = 0; i < h->nnorm; i++)
		if (h->norm[i].kind != NORM_NFC)
			return 0;
	for (i = 0; i < h->npre; i++)
		if (!stage_ok(&h->pre[i]))
			return 0;
	for (i = 0; i < h->nadded; i++)
		if (h->added[i].lstrip || memchr(h->added[i].raw, '\n', h->added[i].raw_n) ||
		    memchr(h->added[i].s, '\n', h->added[i].n))
			return 0;
	return h->npre > 0;
}

/* Whether the character that ends at s[e] (exclusive) is not White_Space. */
static int ends_nonspace(const char *s, size_t e)
{
	size_t a = e;
	uint32_t cp;

	if (!e)
		return 0;
	while (a > 0 && e - a < 4 && ((unsigned char)s[a - 1] & 0xC0) == 0x80)
		a--;
	if (a == 0)
		return 0;
	a--;
	utf8_decode(s + a, e - a, &cp);
	return !uni_is_space(cp);
}

static int starts_letter(const char *s, size_t n, size_t p)
{
	unsigned char c = (unsigned char)s[p];

	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
		return 1;
	/* U+4E00..U+9FFF: E4 B8 80 .. E9 BF BF */
	return p + 3 <= n && c >= 0xE4 && c <= 0xE9 && (c != 0xE4 || (unsigned char)s[p + 1] >= 0xB8);
}

size_t tok_split_next(const char *s, size_t n, size_t from)
{
	size_t p = from;

	while (p < n) {
		const char *nl = memchr(s + p, '\n', n - p);

		if (!nl)
			break;
		p = (size_t)(nl - s) + 1;
		if (p < n && starts_letter(s, n, p) && ends_nonspace(s, p - 1))
			return p;
	}
	return n;
}

int tok_split_cpus(void)
{
#ifdef CPU_COUNT
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set))
		return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
#endif
	return 1;
}

struct part {
	const struct tok_hf *h;
	const char *s;
	size_t n, count;
	enum err e;
	struct diag d;
};

static void *count_part(void *arg)
{
	struct part *p = arg;

	diag_init(&p->d);
	p->e = tok_added_count(p->h, p->s, p->n, &p->count, &p->d);
	return NULL;
}

/* Cuts s[0..n) into at most `parts` parts at boundaries; returns the number
 * of parts, their starts in at[] (at[k] = n after the last). */
static int cut(const char *s, size_t n, int parts, size_t at[TOK_SPLIT_THREADS + 1])
{
	int k = 1, i;

	at[0] = 0;
	for (i = 1; i < parts; i++) {
		size_t p = tok_split_next(s, n, n / (size_t)parts * (size_t)i);

		if (p >= n || p <= at[k - 1])
			continue;
		at[k++] = p;
	}
	at[k] = n;
	return k;
}

enum err tok_split_count(const struct tok_hf *h, const char *text, size_t len,
			 int parts, size_t *count, struct diag *d)
{
	struct part part[TOK_SPLIT_THREADS];
	pthread_t th[TOK_SPLIT_THREADS];
	size_t at[TOK_SPLIT_THREADS + 1];
	int k, i, started[TOK_SPLIT_THREADS] = {0};
	enum err e = ERR_OK;

	*count = 0;
	if (parts > TOK_SPLIT_THREADS)
		parts = TOK_SPLIT_THREADS;
	k = cut(text, len, parts < 1 ? 1 : parts, at);
	for (i = 0; i < k; i++) {
		part[i] = (struct part){h, text + at[i], at[i + 1] - at[i], 0, ERR_OK, {0}};
		/* the first part runs here; a thread that cannot start runs here too */
		started[i] = i > 0 && !pthread_create(&th[i], NULL, count_part, &part[i]);
	}
	for (i = 0; i < k; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			count_part(&part[i]);
	}
	for (i = 0; i < k; i++) {
		if (part[i].e && !e)
			e = diag_fail(d, part[i].e, "%s", part[i].d.msg);
		*count += part[i].count;
	}
	return e;
}
