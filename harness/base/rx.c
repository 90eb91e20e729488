#include "rx.h"

#include <stdio.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "mem.h"

/* The JIT stack of a match state: PCRE2's default of 32 KiB is too small for
 * the long possessive runs of tokenizer patterns over large pieces. */
#define JIT_STACK_START (32 * 1024)
#define JIT_STACK_MAX (64 * 1024 * 1024)

struct rx {
	pcre2_code *code;
	unsigned flags;
};

struct rx_match {
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *js;
};

/* PCRE2's message for `code`, e.g. "missing closing parenthesis". */
static void message(int code, char *out, size_t cap)
{
	if (pcre2_get_error_message(code, (PCRE2_UCHAR *)out, cap) < 0)
		snprintf(out, cap, "PCRE2 error %d", code);
}

enum err rx_compile(const char *pat, size_t n, unsigned flags, struct rx **out,
		    struct diag *d)
{
	uint32_t opts = PCRE2_UTF;
	PCRE2_SIZE off = 0;
	char msg[256];
	int code = 0;
	struct rx *re;

	*out = NULL;
	if (flags & RX_UCP)
		opts |= PCRE2_UCP;
	if (flags & RX_WHOLE)
		opts |= PCRE2_ANCHORED | PCRE2_ENDANCHORED;
	if (!(re = mem_calloc(1, sizeof(*re))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	re->flags = flags;
	re->code = pcre2_compile((PCRE2_SPTR)pat, n, opts, &code, &off, NULL);
	if (!re->code) {
		mem_free(re);
		if (code == PCRE2_ERROR_HEAP_FAILED)
			return diag_fail(d, ERR_NOMEM, "out of memory");
		message(code, msg, sizeof(msg));
		return diag_fail(d, ERR_INPUT, "bad regex at offset %zu: %s", (size_t)off, msg);
	}
	if ((flags & RX_FAST) && (code = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE))) {
		rx_free(re);
		message(code, msg, sizeof(msg));
		return diag_fail(d, ERR_UNSUPPORTED, "regex cannot be JIT-compiled: %s", msg);
	}
	*out = re;
	return ERR_OK;
}

void rx_free(struct rx *re)
{
	if (!re)
		return;
	pcre2_code_free(re->code);
	mem_free(re);
}

enum err rx_match_new(struct rx_match **out, struct diag *d)
{
	struct rx_match *m = mem_calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	m->md = pcre2_match_data_create(1, NULL);
	m->mc = pcre2_match_context_create(NULL);
	m->js = pcre2_jit_stack_create(JIT_STACK_START, JIT_STACK_MAX, NULL);
	if (!m->md || !m->mc || !m->js) {
		rx_match_free(m);
		return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	pcre2_jit_stack_assign(m->mc, NULL, m->js);
	*out = m;
	return ERR_OK;
}

void rx_match_free(struct rx_match *m)
{
	if (!m)
		return;
	pcre2_match_data_free(m->md);
	pcre2_match_context_free(m->mc);
	pcre2_jit_stack_free(m->js);
	mem_free(m);
}

/* A negative PCRE2 match result as an error. */
static enum err match_failed(int rc, size_t from, struct diag *d)
{
	char msg[256];

	if (rc == PCRE2_ERROR_NOMEMORY)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	message(rc, msg, sizeof(msg));
	/* PCRE2's UTF-8 errors are the codes -3 (truncated) to -23 */
	return diag_fail(d, rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21
				    ? ERR_INPUT : ERR_LIMIT,
			 "regex match failed at byte %zu: %s", from, msg);
}

enum err rx_find(const struct rx *re, struct rx_match *m, const char *s,
		 size_t n, size_t from, size_t span[2], int *found,
		 struct diag *d)
{
	struct rx_match *own = NULL;
	PCRE2_SIZE *ov;
	enum err e;
	int rc;

	*found = 0;
	if (!m && (e = rx_match_new(&own, d)))
		return e;
	if (!m)
		m = own;
	/* pcre2_jit_match skips pcre2_match's option and UTF checks */
	if (re->flags & RX_FAST)
		rc = pcre2_jit_match(re->code, (PCRE2_SPTR)s, n, from, 0, m->md, m->mc);
	else
		rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, from, 0, m->md, m->mc);
	e = ERR_OK;
	if (rc >= 0) {
		ov = pcre2_get_ovector_pointer(m->md);
		span[0] = ov[0];
		span[1] = ov[1];
		*found = 1;
	} else if (rc != PCRE2_ERROR_NOMATCH) {
		e = match_failed(rc, from, d);
	}
	rx_match_free(own);
	return e;
}

void rx_unicode_version(char out[RX_VERSION_MAX])
{
	out[0] = 0;
	if (pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, NULL) > RX_VERSION_MAX)
		return;
	pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, out);
}
