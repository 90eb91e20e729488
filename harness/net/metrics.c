/*
 * metrics — Prometheus text format 0.0.4; see metrics.h.
 */
#include "metrics.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/mem.h"

#define MAX_LABELS 64
#define MAX_BUCKETS 256

struct view {
	const char *p;
	size_t len;
};

struct label {
	struct view name, value; /* value still escaped */
};

/* One line being parsed. */
struct line {
	const char *p, *end;
	const char *start;
	size_t lineno;
	struct diag *d;
};

void metrics_init(struct metrics *m)
{
	memset(m, 0, sizeof(*m));
}

void metrics_release(struct metrics *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		mem_free(m->s[i].key);
	for (i = 0; i < m->nf; i++)
		mem_free(m->f[i].name);
	mem_free(m->s);
	mem_free(m->f);
	metrics_init(m);
}

/* ---- lexing ----------------------------------------------------------- */

static enum err bad(struct line *l, const char *what)
{
	return diag_fail(l->d, ERR_INPUT, "metrics line %zu, column %zu: %s", l->lineno,
			 (size_t)(l->p - l->start) + 1, what);
}

static void blanks(struct line *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t'))
		l->p++;
}

static int name_char(char c, int first, int colon)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':'))
		return 1;
	return !first && c >= '0' && c <= '9';
}

/* A metric name (colons allowed) or label name. */
static int lex_name(struct line *l, int colon, struct view *out)
{
	const char *s = l->p;

	if (l->p >= l->end || !name_char(*l->p, 1, colon))
		return 0;
	while (l->p < l->end && name_char(*l->p, 0, colon))
		l->p++;
	out->p = s;
	out->len = (size_t)(l->p - s);
	return 1;
}

/* A quoted label value; leaves the view on its escaped bytes. */
static enum err lex_quoted(struct line *l, struct view *out)
{
	if (l->p >= l->end || *l->p != '"')
		return bad(l, "expected '\"' to open a label value");
	out->p = ++l->p;
	while (l->p < l->end && *l->p != '"') {
		if (*l->p == '\\') {
			if (l->p + 1 >= l->end || !strchr("\\\"n", l->p[1]))
				return bad(l, "invalid escape in a label value (only \\\\, \\\" and \\n)");
			l->p++;
		}
		l->p++;
	}
	if (l->p >= l->end)
		return bad(l, "unterminated label value");
	out->len = (size_t)(l->p - out->p);
	l->p++;
	return ERR_OK;
}

/* The next blank-separated token. */
static struct view lex_token(struct line *l)
{
	struct view v = {l->p, 0};

	while (l->p < l->end && *l->p != ' ' && *l->p != '\t')
		l->p++;
	v.len = (size_t)(l->p - v.p);
	return v;
}

static int parse_double(struct view v, double *out)
{
	char tmp[64], *end;

	if (!v.len || v.len >= sizeof(tmp))
		return 0;
	memcpy(tmp, v.p, v.len);
	tmp[v.len] = '\0';
	errno = 0;
	*out = strtod(tmp, &end);
	return end == tmp + v.len && (errno == 0 || errno == ERANGE);
}

static int parse_int64(struct view v, int64_t *out)
{
	char tmp[32], *end;
	long long x;

	if (!v.len || v.len >= sizeof(tmp))
		return 0;
	memcpy(tmp, v.p, v.len);
	tmp[v.len] = '\0';
	errno = 0;
	x = strtoll(tmp, &end, 10);
	*out = (int64_t)x;
	return end == tmp + v.len && errno == 0;
}

/* ---- samples ---------------------------------------------------------- */

static int cmp_label(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
	int c = memcmp(x->name.p, y->name.p, n);

	return c ? c : (x->name.len > y->name.len) - (x->name.len < y->name.len);
}

/* `{a="x", b="y",}` into `lab`; sorted, names unique. */
static enum err lex_labels(struct line *l, struct label *lab, size_t *n)
{
	size_t i;
	enum err e;

	*n = 0;
	l->p++; /* '{' */
	for (;;) {
		blanks(l);
		if (l->p < l->end && *l->p == '}')
			break;
		if (*n == MAX_LABELS)
			return bad(l, "more than 64 labels");
		if (!lex_name(l, 0, &lab[*n].name))
			return bad(l, "expected a label name");
		blanks(l);
		if (l->p >= l->end || *l->p != '=')
			return bad(l, "expected '=' after a label name");
		l->p++;
		blanks(l);
		if ((e = lex_quoted(l, &lab[(*n)++].value)))
			return e;
		blanks(l);
		if (l->p < l->end && *l->p == ',') {
			l->p++;
			continue;
		}
		if (l->p >= l->end || *l->p != '}')
			return bad(l, "expected ',' or '}' after a label value");
		break;
	}
	l->p++;
	qsort(lab, *n, sizeof(*lab), cmp_label);
	for (i = 1; i < *n; i++)
		if (!cmp_label(&lab[i - 1], &lab[i]))
			return bad(l, "a label is given twice");
	return ERR_OK;
}

static enum err make_key(struct view name, const struct label *lab, size_t n,
			 char **out, struct line *l)
{
	struct buf b;
	size_t i;
	enum err e;

	buf_init(&b, METRICS_MAX_LINE + 64);
	e = buf_append(&b, name.p, name.len);
	for (i = 0; i < n && !e; i++) {
		e = buf_putc(&b, i ? ',' : '{');
		if (!e)
			e = buf_append(&b, lab[i].name.p, lab[i].name.len);
		if (!e)
			e = buf_puts(&b, "=\"");
		if (!e)
			e = buf_append(&b, lab[i].value.p, lab[i].value.len);
		if (!e)
			e = buf_putc(&b, '"');
	}
	if (!e && n)
		e = buf_putc(&b, '}');
	if (!e && !(*out = buf_take(&b, NULL)))
		e = ERR_NOMEM;
	buf_release(&b);
	return e ? diag_fail(l->d, ERR_NOMEM, "out of memory reading metrics") : ERR_OK;
}

static enum err push_sample(struct metrics *m, struct metrics_sample *s, struct line *l)
{
	if (m->n == METRICS_MAX_SAMPLES) {
		mem_free(s->key);
		return bad(l, "more than 200000 samples");
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		struct metrics_sample *p = mem_realloc(m->s, cap * sizeof(*p));

		if (!p) {
			mem_free(s->key);
			return diag_fail(l->d, ERR_NOMEM, "out of memory reading metrics");
		}
		m->s = p;
		m->cap = cap;
	}
	m->s[m->n++] = *s;
	return ERR_OK;
}

static enum err sample_line(struct metrics *m, struct line *l)
{
	struct label lab[MAX_LABELS];
	struct metrics_sample s = {0};
	struct view name, tok;
	size_t n = 0;
	enum err e;

	if (!lex_name(l, 1, &name))
		return bad(l, "expected a metric name");
	blanks(l);
	if (l->p < l->end && *l->p == '{' && (e = lex_labels(l, lab, &n)))
		return e;
	blanks(l);
	tok = lex_token(l);
	if (!parse_double(tok, &s.value))
		return bad(l, tok.len ? "the value is not a number" : "expected a value");
	blanks(l);
	if (l->p < l->end) {
		tok = lex_token(l);
		if (!parse_int64(tok, &s.timestamp_ms))
			return bad(l, "the timestamp is not an integer");
		s.has_timestamp = 1;
		blanks(l);
		if (l->p < l->end)
			return bad(l, "unexpected text after the timestamp");
	}
	if ((e = make_key(name, lab, n, &s.key, l)))
		return e;
	s.name_len = name.len;
	return push_sample(m, &s, l);
}

/* ---- comments --------------------------------------------------------- */

static const char *const type_names[] = {"untyped", "counter", "gauge", "histogram",
					 "summary"};

static enum err push_family(struct metrics *m, struct view name, enum metrics_type t,
			    struct line *l)
{
	char *copy;

	if (m->nf == m->capf) {
		size_t cap = m->capf ? 2 * m->capf : 64;
		struct metrics_family *p = mem_realloc(m->f, cap * sizeof(*p));

		if (!p)
			return diag_fail(l->d, ERR_NOMEM, "out of memory reading metrics");
		m->f = p;
		m->capf = cap;
	}
	if (!(copy = mem_strndup(name.p, name.len)))
		return diag_fail(l->d, ERR_NOMEM, "out of memory reading metrics");
	m->f[m->nf].name = copy;
	m->f[m->nf++].type = t;
	return ERR_OK;
}

/* `# TYPE name type` is kept; `# HELP` and other comments are skipped. */
static enum err comment_line(struct metrics *m, struct line *l)
{
	struct view word, name, type;
	size_t t;

	l->p++;
	blanks(l);
	word = lex_token(l);
	if (word.len != 4 || memcmp(word.p, "TYPE", 4))
		return ERR_OK;
	blanks(l);
	if (!lex_name(l, 1, &name))
		return bad(l, "expected a metric name after '# TYPE'");
	blanks(l);
	type = lex_token(l);
	blanks(l);
	for (t = 0; t < sizeof(type_names) / sizeof(type_names[0]); t++)
		if (type.len == strlen(type_names[t]) && !memcmp(type.p, type_names[t], type.len))
			break;
	if (t == sizeof(type_names) / sizeof(type_names[0]) || l->p < l->end)
		return bad(l, "the type is not one of counter, gauge, histogram, summary, untyped");
	return push_family(m, name, (enum metrics_type)t, l);
}

static int cmp_sample(const void *a, const void *b)
{
	return strcmp(((const struct metrics_sample *)a)->key,
		      ((const struct metrics_sample *)b)->key);
}

static enum err sort_check(struct metrics *m, struct diag *d)
{
	size_t i;

	if (m->n)
		qsort(m->s, m->n, sizeof(*m->s), cmp_sample);
	for (i = 1; i < m->n; i++)
		if (!strcmp(m->s[i - 1].key, m->s[i].key))
			return diag_fail(d, ERR_INPUT, "metrics sample '%.200s' appears twice",
					 m->s[i].key);
	return ERR_OK;
}

enum err metrics_parse(struct metrics *m, const char *text, size_t len,
		       struct diag *d)
{
	const char *p = text, *end = text + len;
	struct line l = {0};
	enum err e = ERR_OK;

	l.d = d;
	while (p < end && !e) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		l.start = l.p = p;
		l.end = nl ? nl : end;
		l.lineno++;
		if (l.end > l.p && l.end[-1] == '\r')
			l.end--;
		if ((size_t)(l.end - l.p) > METRICS_MAX_LINE)
			return bad(&l, "line longer than 1 MiB");
		if (memchr(l.p, '\0', (size_t)(l.end - l.p)))
			return bad(&l, "a NUL byte");
		blanks(&l);
		if (l.p < l.end)
			e = *l.p == '#' ? comment_line(m, &l) : sample_line(m, &l);
		p = nl ? nl + 1 : end;
	}
	return e ? e : sort_check(m, d);
}

/* ---- inspect ---------------------------------------------------------- */

static int is_suffix(const char *name, size_t len, size_t flen, const char *suffix)
{
	size_t sl = strlen(suffix);

	return len == flen + sl && !memcmp(name + flen, suffix, sl);
}

enum metrics_type metrics_type_of(const struct metrics *m, const char *name,
				  size_t name_len)
{
	static const char *const suffixes[] = {"_total", "_created", "_bucket", "_sum", "_count"};
	size_t i, k;

	for (i = 0; i < m->nf; i++)
		if (strlen(m->f[i].name) == name_len && !memcmp(m->f[i].name, name, name_len))
			return m->f[i].type;
	for (i = 0; i < m->nf; i++) {
		const char *f = m->f[i].name;
		size_t fl = strlen(f);

		if (name_len <= fl || memcmp(name, f, fl))
			continue;
		for (k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++)
			if (is_suffix(name, name_len, fl, suffixes[k]))
				return k == 1 ? METRICS_GAUGE : m->f[i].type;
	}
	return METRICS_UNTYPED;
}

const struct metrics_sample *metrics_find(const struct metrics *m, const char *key)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->s[mid].key, key);

		if (!c)
			return &m->s[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int metrics_label(const struct metrics_sample *s, const char *label, char *out,
		  size_t cap)
{
	const char *p = s->key + s->name_len, *v;
	size_t ll = strlen(label), n = 0;

	if (*p != '{' || !cap)
		return 0;
	for (p++; *p; ) {
		const char *eq = strchr(p, '=');

		if (!eq)
			return 0;
		v = eq + 2;
		if ((size_t)(eq - p) == ll && !memcmp(p, label, ll)) {
			for (; *v && *v != '"'; v++) {
				char c = *v == '\\' ? (*++v == 'n' ? '\n' : *v) : *v;

				if (n + 1 < cap)
					out[n++] = c;
			}
			out[n] = '\0';
			return 1;
		}
		for (; *v && *v != '"'; v++)
			v += *v == '\\';
		p = *v ? v + 2 : v; /* past '",' or '"}' */
	}
	return 0;
}

static int has_name(const struct metrics_sample *s, const char *name, size_t len)
{
	return s->name_len == len && !memcmp(s->key, name, len);
}

double metrics_sum(const struct metrics *m, const char *name, size_t *count)
{
	size_t i, k = 0, len = strlen(name);
	double sum = 0;

	for (i = 0; i < m->n; i++)
		if (has_name(&m->s[i], name, len)) {
			sum += m->s[i].value;
			k++;
		}
	if (count)
		*count = k;
	return sum;
}

double metrics_max(const struct metrics *m, const char *name, size_t *count)
{
	size_t i, k = 0, len = strlen(name);
	double max = NAN;

	for (i = 0; i < m->n; i++)
		if (has_name(&m->s[i], name, len)) {
			max = k++ ? fmax(max, m->s[i].value) : m->s[i].value;
		}
	if (count)
		*count = k;
	return max;
}

static enum err copy_sample(struct metrics *out, const struct metrics_sample *s,
			    double value, struct diag *d)
{
	struct metrics_sample c = *s;

	c.value = value;
	if (!(c.key = mem_strndup(s->key, strlen(s->key))))
		return diag_fail(d, ERR_NOMEM, "out of memory taking a metrics delta");
	if (out->n == out->cap) {
		size_t cap = out->cap ? 2 * out->cap : 256;
		struct metrics_sample *p = mem_realloc(out->s, cap * sizeof(*p));

		if (!p) {
			mem_free(c.key);
			return diag_fail(d, ERR_NOMEM, "out of memory taking a metrics delta");
		}
		out->s = p;
		out->cap = cap;
	}
	out->s[out->n++] = c;
	return ERR_OK;
}

enum err metrics_delta(const struct metrics *before, const struct metrics *after,
		       struct metrics *out, struct diag *d)
{
	size_t i;
	enum err e = ERR_OK;

	for (i = 0; i < after->nf && !e; i++) {
		struct view v = {after->f[i].name, strlen(after->f[i].name)};
		struct line l = {0};

		l.d = d;
		e = push_family(out, v, after->f[i].type, &l);
	}
	for (i = 0; i < after->n && !e; i++) {
		const struct metrics_sample *a = &after->s[i], *b = metrics_find(before, a->key);
		enum metrics_type t = metrics_type_of(after, a->key, a->name_len);
		double v = a->value;

		if ((t == METRICS_COUNTER || t == METRICS_HISTOGRAM || t == METRICS_SUMMARY) && b &&
		    b->value <= a->value)
			v = a->value - b->value;
		e = copy_sample(out, a, v, d);
	}
	return e; /* `after` was sorted, so `out` is */
}

struct bucket {
	double le, count;
};

static int cmp_bucket(const void *a, const void *b)
{
	double x = ((const struct bucket *)a)->le, y = ((const struct bucket *)b)->le;

	return (x > y) - (x < y);
}

/* The buckets of `family`, summed over label sets by bound, sorted. */
static size_t gather(const struct metrics *m, const char *family, struct bucket *bk)
{
	char name[256], le[64];
	size_t i, j, n = 0, len;
	double bound;

	len = (size_t)snprintf(name, sizeof(name), "%s_bucket", family);
	if (len >= sizeof(name))
		return 0;
	for (i = 0; i < m->n; i++) {
		struct view v;

		if (!has_name(&m->s[i], name, len) || !metrics_label(&m->s[i], "le", le, sizeof(le)))
			continue;
		v.p = le;
		v.len = strlen(le);
		if (!parse_double(v, &bound) || isnan(bound))
			continue;
		for (j = 0; j < n && bk[j].le != bound; j++)
			;
		if (j == n && n == MAX_BUCKETS)
			continue;
		if (j == n)
			bk[n++] = (struct bucket){bound, 0};
		bk[j].count += m->s[i].value;
	}
	qsort(bk, n, sizeof(*bk), cmp_bucket);
	return n;
}

double metrics_quantile(const struct metrics *m, const char *family, double q)
{
	struct bucket bk[MAX_BUCKETS];
	size_t n = gather(m, family, bk), i;
	double rank, lo = 0, below = 0;

	if (!n || !isinf(bk[n - 1].le) || !(bk[n - 1].count > 0) || q < 0 || q > 1)
		return NAN;
	rank = q * bk[n - 1].count;
	for (i = 0; i < n - 1 && bk[i].count < rank; i++) {
		lo = bk[i].le;
		below = bk[i].count;
	}
	if (i == n - 1)
		return n >= 2 ? bk[n - 2].le : NAN;
	if (i == 0 && bk[0].le <= 0)
		return bk[0].le;
	if (bk[i].count - below <= 0)
		return bk[i].le;
	return lo + (bk[i].le - lo) * (rank - below) / (bk[i].count - below);
}

/* ---- the server's view ------------------------------------------------ */

struct dialect {
	const char *name, *prefix;
	const char *prompt, *generation, *ttft, *itl, *itl_old;
	const char *hits, *queries, *hit_rate, *running, *waiting, *kv, *kv_old;
	const char *drafts, *draft_tokens, *accepted, *per_pos; /* counters */
	const char *accept_rate, *accept_length;                /* gauges */
};

/* vLLM v1 loggers.py (PrometheusStatLogger) and SGLang metrics/collector.py. */
static const struct dialect dialects[] = {
	{"vllm", "vllm:", "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
	 "vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
	 "vllm:time_per_output_token_seconds", "vllm:prefix_cache_hits_total",
	 "vllm:prefix_cache_queries_total", NULL, "vllm:num_requests_running",
	 "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
	 "vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
	 "vllm:spec_decode_num_accepted_tokens_total",
	 "vllm:spec_decode_num_accepted_tokens_per_pos_total", NULL, NULL},
	{"sglang", "sglang:", "sglang:prompt_tokens_total", "sglang:generation_tokens_total",
	 "sglang:time_to_first_token_seconds", "sglang:inter_token_latency_seconds", NULL,
	 "sglang:cached_tokens_total", NULL, "sglang:cache_hit_rate", "sglang:num_running_reqs",
	 "sglang:num_queue_reqs", "sglang:token_usage", NULL, NULL, NULL, NULL, NULL,
	 "sglang:spec_accept_rate", "sglang:spec_accept_length"},
};

/* The sum of `name` (or `alt`) over label sets, NaN when absent. */
static double pick(const struct metrics *m, const char *name, const char *alt)
{
	size_t k = 0;
	double v = name ? metrics_sum(m, name, &k) : 0;

	if (!k && alt)
		v = metrics_sum(m, alt, &k);
	return k ? v : NAN;
}

/* A gauge that is a share of one engine's capacity (KV cache usage, a hit
 * rate): the mean over its label sets, one per engine (vLLM's `engine`,
 * SGLang's `dp_rank`), never their sum (4 engines at 0.5 are 0.5, not 2);
 * the largest into *max, the label sets into *n. NaN when absent. */
static double ratio_mean(const struct metrics *m, const char *name, const char *alt,
			 double *max, double *n)
{
	size_t k = 0;
	double sum = name ? metrics_sum(m, name, &k) : 0;

	if (!k && alt)
		name = alt, sum = metrics_sum(m, alt, &k);
	*n = (double)k;
	*max = k ? metrics_max(m, name, NULL) : NAN;
	return k ? sum / (double)k : NAN;
}

static double hist_mean(const struct metrics *m, const char *family, double *count)
{
	char name[256];
	double sum, n;

	snprintf(name, sizeof(name), "%s_sum", family);
	sum = pick(m, name, NULL);
	snprintf(name, sizeof(name), "%s_count", family);
	n = pick(m, name, NULL);
	if (count)
		*count = n;
	return n > 0 ? sum / n : NAN;
}

static const struct dialect *find_dialect(const struct metrics *m)
{
	size_t i, k;

	for (i = 0; i < m->n; i++)
		for (k = 0; k < sizeof(dialects) / sizeof(dialects[0]); k++)
			if (!strncmp(m->s[i].key, dialects[k].prefix, strlen(dialects[k].prefix)))
				return &dialects[k];
	return NULL;
}

/* vLLM's acceptance per draft position: its per-position counter (label
 * "position", 0-based) over the drafts; positions beyond
 * METRICS_SPEC_POS_MAX are left out. */
static void spec_positions(const struct metrics *delta, const char *family, struct metrics_view *out)
{
	size_t i, len = strlen(family);
	char pos[16], *end;

	for (i = 0; i < delta->n; i++) {
		const struct metrics_sample *s = &delta->s[i];
		long p;

		if (s->name_len != len || strncmp(s->key, family, len) || !metrics_label(s, "position", pos, sizeof(pos)))
			continue;
		p = strtol(pos, &end, 10);
		if (*end || end == pos || p < 0 || p >= METRICS_SPEC_POS_MAX)
			continue;
		out->spec_pos[p] = out->spec_drafts > 0 ? s->value / out->spec_drafts : NAN;
		if (p + 1 > out->spec_npos)
			out->spec_npos = (int)p + 1;
	}
}

/* The speculative decoding figures (all NaN without a dialect or counters). */
static void spec_view(const struct dialect *x, const struct metrics *delta, const struct metrics *after,
		      struct metrics_view *out)
{
	double n, max;
	int i;

	for (i = 0; i < METRICS_SPEC_POS_MAX; i++)
		out->spec_pos[i] = NAN;
	out->spec_npos = 0;
	out->spec_drafts = out->spec_draft_tokens = out->spec_accepted = NAN;
	out->spec_accept_rate = out->spec_accept_length = NAN;
	if (!x)
		return;
	if (x->drafts) {
		out->spec_drafts = pick(delta, x->drafts, NULL);
		out->spec_draft_tokens = pick(delta, x->draft_tokens, NULL);
		out->spec_accepted = pick(delta, x->accepted, NULL);
		if (out->spec_draft_tokens > 0)
			out->spec_accept_rate = out->spec_accepted / out->spec_draft_tokens;
		if (out->spec_drafts > 0)
			out->spec_accept_length = 1 + out->spec_accepted / out->spec_drafts;
		spec_positions(delta, x->per_pos, out);
	} else {
		out->spec_accept_rate = ratio_mean(after, x->accept_rate, NULL, &max, &n);
		out->spec_accept_length = ratio_mean(after, x->accept_length, NULL, &max, &n);
	}
}

void metrics_view(const struct metrics *delta, const struct metrics *after,
		  struct metrics_view *out)
{
	const struct dialect *x = find_dialect(after);
	char itl[128];
	double n;

	out->dialect = NULL;
	out->prompt_tokens = out->generation_tokens = out->requests = NAN;
	out->ttft_mean_s = out->ttft_p50_s = out->ttft_p95_s = NAN;
	out->itl_mean_s = out->itl_p95_s = out->prefix_hits = out->prefix_queries = NAN;
	out->cache_hit_rate = out->running = out->waiting = out->kv_usage = NAN;
	out->cache_hit_rate_max = out->kv_usage_max = NAN;
	out->engines = 0;
	spec_view(x, delta, after, out);
	if (!x)
		return;
	out->dialect = x->name;
	out->prompt_tokens = pick(delta, x->prompt, NULL);
	out->generation_tokens = pick(delta, x->generation, NULL);
	out->ttft_mean_s = hist_mean(delta, x->ttft, &out->requests);
	out->ttft_p50_s = metrics_quantile(delta, x->ttft, 0.5);
	out->ttft_p95_s = metrics_quantile(delta, x->ttft, 0.95);
	snprintf(itl, sizeof(itl), "%s_count", x->itl);
	/* vLLM before 0.11 has only the now deprecated time_per_output_token */
	snprintf(itl, sizeof(itl), "%s", isnan(pick(delta, itl, NULL)) && x->itl_old ? x->itl_old
										   : x->itl);
	out->itl_mean_s = hist_mean(delta, itl, NULL);
	out->itl_p95_s = metrics_quantile(delta, itl, 0.95);
	out->prefix_hits = pick(delta, x->hits, NULL);
	out->prefix_queries = x->queries ? pick(delta, x->queries, NULL) : NAN;
	if (x->hit_rate)
		out->cache_hit_rate = ratio_mean(after, x->hit_rate, NULL, &out->cache_hit_rate_max, &n);
	else
		out->cache_hit_rate = out->cache_hit_rate_max =
			out->prefix_queries > 0 ? out->prefix_hits / out->prefix_queries : NAN;
	out->running = pick(after, x->running, NULL);
	out->waiting = pick(after, x->waiting, NULL);
	out->kv_usage = ratio_mean(after, x->kv, x->kv_old, &out->kv_usage_max, &out->engines);
}

void metrics_file_name(const char *case_id, int open_loop, double level, const char *suffix,
		       char *out, size_t cap)
{
	if (open_loop)
		snprintf(out, cap, "metrics-%s-r%g%s", case_id, level, suffix);
	else
		snprintf(out, cap, "metrics-%s-c%.0f%s", case_id, level, suffix);
}
