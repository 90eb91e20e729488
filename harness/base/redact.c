/*
 * redact — see redact.h.
 */
#include <string.h>

#include "redact.h"

static void add(struct redact *r, const char *s, size_t len, size_t min,
		const char *mark)
{
	if (len >= min && len >= strlen(mark) && r->n < REDACT_MAX) {
		r->s[r->n] = s;
		r->mark[r->n] = mark;
		r->len[r->n++] = len;
	}
}

/* The base64 (RFC 4648 section 4) of `n` bytes at `p` into `out`; "" when it
 * does not fit in `cap` bytes. */
static void base64(const unsigned char *p, size_t n, char *out, size_t cap)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, o = 0;

	out[0] = '\0';
	if ((n + 2) / 3 * 4 + 1 > cap)
		return;
	for (i = 0; i < n; i += 3) {
		unsigned long v = (unsigned long)p[i] << 16 |
				  (i + 1 < n ? (unsigned long)p[i + 1] << 8 : 0) |
				  (i + 2 < n ? p[i + 2] : 0);
		out[o++] = al[v >> 18 & 63];
		out[o++] = al[v >> 12 & 63];
		out[o++] = i + 1 < n ? al[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? al[v & 63] : '=';
	}
	out[o] = '\0';
}

void redact_init(struct redact *r, const char *api_key, const char *base_url)
{
	const char *host, *at, *colon;

	memset(r, 0, sizeof(*r));
	if (api_key)
		add(r, api_key, strlen(api_key), REDACT_MIN, REDACT_MARK);
	if (!base_url || !(host = strstr(base_url, "://")))
		return;
	host += 3;
	at = host + strcspn(host, "/?#");
	while (at > host && at[-1] != '@')
		at--;
	if (at == host)
		return; /* no user info */
	if ((size_t)(at - host) + 3 < sizeof(r->url_form)) {
		memcpy(r->url_form, "://", 3);
		memcpy(r->url_form + 3, host, (size_t)(at - host));
		r->url_form[3 + (at - host)] = '\0';
		add(r, r->url_form, strlen(r->url_form), 1, "://");
	}
	base64((const unsigned char *)host, (size_t)(at - 1 - host), r->basic, sizeof(r->basic));
	add(r, r->basic, strlen(r->basic), REDACT_MIN, REDACT_MARK);
	add(r, host, (size_t)(at - 1 - host), REDACT_MIN, REDACT_MARK);
	colon = memchr(host, ':', (size_t)(at - 1 - host));
	if (colon)
		add(r, colon + 1, (size_t)(at - 1 - colon - 1), REDACT_MIN, REDACT_MARK);
}

/* One secret out of p[0..len); returns the new length and counts in *hits. */
static size_t one(const char *sec, size_t slen, const char *mark, char *p,
		  size_t len, size_t *hits)
{
	size_t in = 0, out = 0, mlen = strlen(mark);

	while (in < len) {
		if (len - in >= slen && p[in] == sec[0] && !memcmp(p + in, sec, slen)) {
			memmove(p + out, mark, mlen);
			out += mlen;
			in += slen;
			(*hits)++;
		} else {
			p[out++] = p[in++];
		}
	}
	return out;
}

static size_t run_all(const struct redact *r, char *p, size_t len, size_t *hits)
{
	int i;

	for (i = 0; r && i < r->n; i++)
		len = one(r->s[i], r->len[i], r->mark[i], p, len, hits);
	return len;
}

int redact_found(const struct redact *r, const char *p, size_t len)
{
	size_t at;
	int i;

	for (i = 0; r && i < r->n; i++)
		for (at = 0; at + r->len[i] <= len; at++)
			if (p[at] == r->s[i][0] && !memcmp(p + at, r->s[i], r->len[i]))
				return 1;
	return 0;
}

size_t redact_bytes(const struct redact *r, char *p, size_t len)
{
	size_t hits = 0;

	return run_all(r, p, len, &hits);
}

size_t redact_str(const struct redact *r, char *s)
{
	size_t hits = 0, len;

	if (!s || !r || !r->n)
		return 0;
	len = run_all(r, s, strlen(s), &hits);
	s[len] = '\0';
	return hits;
}
