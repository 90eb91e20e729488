/*
 * filler — grammar expansion for needle documents; see filler.h.
 *
 * The grammar files are parsed once per filler into rules, alternatives and
 * parts (literal bytes, rule references, bindings). Expansion picks an
 * alternative uniformly with the filler's own prng, so output depends only on
 * the seed and the call sequence.
 */
#include "filler.h"

#include <string.h>

#include "base/embed.h"
#include "base/mem.h"

enum part_type { PART_LIT, PART_REF, PART_BIND, PART_VAR };

struct part {
	unsigned char type, cap, slot;
	size_t a;   /* PART_LIT: offset in the pool; REF/BIND: rule index */
	size_t len; /* PART_LIT: bytes */
};

struct alt {
	size_t first, n; /* parts */
};

struct rule {
	const char *name; /* into the grammar text */
	size_t namelen;
	size_t first, n;  /* alternatives */
};

struct binding {
	size_t off, len; /* into the output buffer of the current expansion */
};

#define NSLOTS 26
#define NAME_MIN 5        /* shortest project name; filler_check relies on it */
#define MAX_RETRIES 2000  /* expansions tried before a grammar counts as exhausted */

struct filler {
	enum filler_kind kind;
	struct prng prng;
	struct rule *rules;
	size_t nrules, caprules;
	struct alt *alts;
	size_t nalts, capalts;
	struct part *parts;
	size_t nparts, capparts;
	struct buf pool;          /* unescaped literal bytes */
	struct binding bind[NSLOTS];
	struct buf scratch;
	uint64_t *seen;           /* hash set of emitted units; 0 = empty */
	size_t nseen, capseen;
	char **projects;          /* as in the file */
	char **lower;             /* lower-case copies for filler_check */
	size_t nprojects;
	size_t r_sentence, r_short, r_zh, r_zh_short, r_function, r_comment,
	       r_comment_short, r_word;
};

static const char *const kind_names[] = {"prose", "code", "zh", "mixed"};

enum err filler_kind_parse(const char *name, enum filler_kind *out,
			   struct diag *d)
{
	size_t i;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (!strcmp(name, kind_names[i])) {
			*out = (enum filler_kind)i;
			return ERR_OK;
		}
	return diag_fail(d, ERR_INPUT,
			 "unknown filler '%s': expected prose, code, zh or mixed",
			 name);
}

const char *filler_kind_name(enum filler_kind k)
{
	return (unsigned)k < 4 ? kind_names[k] : "?";
}

/* Grows `*p` (of `*cap` elements of `size`) to hold `need`. */
static enum err grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return ERR_OK;
	while (n < need)
		n *= 2;
	q = mem_realloc(*p, n * size);
	if (!q)
		return ERR_NOMEM;
	*p = q;
	*cap = n;
	return ERR_OK;
}

/* ---- parsing ---------------------------------------------------------- */

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || c == '_';
}

static long find_rule(const struct filler *f, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < f->nrules; i++)
		if (f->rules[i].namelen == len && !memcmp(f->rules[i].name, name, len))
			return (long)i;
	return -1;
}

static enum err add_part(struct filler *f, struct part p)
{
	if (grow((void **)&f->parts, &f->capparts, f->nparts + 1, sizeof(p)))
		return ERR_NOMEM;
	f->parts[f->nparts++] = p;
	return ERR_OK;
}

/* Appends literal byte `c` to the pool, extending the last literal part. */
static enum err add_lit(struct filler *f, char c)
{
	struct part *last = f->nparts ? &f->parts[f->nparts - 1] : NULL;
	struct part p = {PART_LIT, 0, 0, f->pool.len, 1};

	if (buf_putc(&f->pool, c))
		return ERR_NOMEM;
	if (last && last->type == PART_LIT && last->a + last->len == p.a &&
	    f->alts[f->nalts - 1].first <= f->nparts - 1) {
		last->len++;
		return ERR_OK;
	}
	return add_part(f, p);
}

/* Parses "{...}" at `s` (length `n` to the end of the line) into a part;
 * returns the bytes used, 0 when it is not a reference (a literal brace). */
static size_t parse_ref(struct filler *f, const char *s, size_t n,
			const char *file, size_t line, enum err *e,
			struct diag *d)
{
	struct part p = {PART_REF, 0, 0, 0, 0};
	size_t i = 1, start;
	long r;

	if (i < n && s[i] == '^')
		p.cap = 1, i++;
	if (i + 2 < n && (s[i] == '=' || s[i] == '$') && s[i + 1] >= 'a' &&
	    s[i + 1] <= 'z') {
		p.type = s[i] == '=' ? PART_BIND : PART_VAR;
		p.slot = (unsigned char)(s[i + 1] - 'a');
		i += 2;
		if (p.type == PART_VAR)
			return i < n && s[i] == '}' &&
			       !(*e = add_part(f, p)) ? i + 1 : 0;
		if (i >= n || s[i] != ':')
			return 0;
		i++;
	}
	start = i;
	while (i < n && is_name_char(s[i]))
		i++;
	if (i == start || i >= n || s[i] != '}')
		return 0;
	r = find_rule(f, s + start, i - start);
	if (r < 0) {
		*e = diag_fail(d, ERR_INTERNAL, "grammar '%s' line %zu: unknown rule '%.*s'",
			       file, line, (int)(i - start), s + start);
		return 0;
	}
	p.a = (size_t)r;
	*e = add_part(f, p);
	return i + 1;
}

static char unescape(char c)
{
	return c == 'n' ? '\n' : c == 't' ? '\t' : c;
}

/* Parses one alternative line into parts. */
static enum err parse_alt(struct filler *f, const char *s, size_t n,
			  const char *file, size_t line, struct diag *d)
{
	struct alt a;
	enum err e = ERR_OK;
	size_t i = 0, used;

	if (grow((void **)&f->alts, &f->capalts, f->nalts + 1, sizeof(a)))
		return ERR_NOMEM;
	a.first = f->nparts;
	a.n = 0;
	f->alts[f->nalts++] = a;
	while (i < n && !e) {
		if (s[i] == '\\' && i + 1 < n) {
			e = add_lit(f, unescape(s[i + 1]));
			i += 2;
		} else if (s[i] == '{' &&
			   (used = parse_ref(f, s + i, n - i, file, line, &e, d))) {
			i += used;
		} else if (!e) {
			e = add_lit(f, s[i++]);
		}
	}
	f->alts[f->nalts - 1].n = f->nparts - a.first;
	return e;
}

/* Pass 1 (`pass` 0) registers rule names; pass 2 parses alternatives. */
static enum err parse_grammar(struct filler *f, const char *file, int pass,
			      struct diag *d)
{
	const struct embed_file *ef = embed_find(file);
	const char *s, *end, *nl;
	struct rule *cur = NULL;
	size_t line = 0;
	enum err e = ERR_OK;

	if (!ef)
		return diag_fail(d, ERR_INTERNAL, "embedded grammar '%s' is missing", file);
	s = (const char *)ef->data;
	end = s + ef->len;
	for (; s < end && !e; s = nl + 1) {
		size_t n;

		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		n = (size_t)(nl - s);
		line++;
		if (n == 0 || s[0] == '#')
			continue;
		if (s[0] == '@') {
			if (pass == 0) {
				if (grow((void **)&f->rules, &f->caprules, f->nrules + 1,
					 sizeof(*cur)))
					return ERR_NOMEM;
				cur = &f->rules[f->nrules++];
				cur->name = s + 1;
				cur->namelen = n - 1;
				cur->first = cur->n = 0;
			} else {
				cur = &f->rules[find_rule(f, s + 1, n - 1)];
				cur->first = f->nalts;
			}
			continue;
		}
		if (!cur)
			return diag_fail(d, ERR_INTERNAL,
					 "grammar '%s' line %zu: text before the first rule",
					 file, line);
		if (pass == 1) {
			e = parse_alt(f, s, n, file, line, d);
			cur->n++;
		}
	}
	return e;
}

/* ---- expansion -------------------------------------------------------- */

static enum err expand(struct filler *f, size_t rule, int cap, int depth,
		       struct buf *out, struct diag *d);

static enum err expand_part(struct filler *f, const struct part *p, int depth,
			    struct buf *out, struct diag *d)
{
	const struct binding *b;
	size_t start = out->len;
	enum err e;

	switch (p->type) {
	case PART_LIT:
		return buf_append(out, f->pool.data + p->a, p->len);
	case PART_REF:
		return expand(f, p->a, p->cap, depth + 1, out, d);
	case PART_BIND:
		e = expand(f, p->a, p->cap, depth + 1, out, d);
		f->bind[p->slot].off = start;
		f->bind[p->slot].len = out->len - start;
		return e;
	default:
		b = &f->bind[p->slot];
		if (b->off + b->len > out->len)
			return diag_fail(d, ERR_INTERNAL, "grammar uses '$%c' before binding it",
					 'a' + p->slot);
		if (buf_reserve(out, b->len))
			return ERR_NOMEM;
		return buf_append(out, out->data + b->off, b->len);
	}
}

static enum err expand(struct filler *f, size_t rule, int cap, int depth,
		       struct buf *out, struct diag *d)
{
	const struct rule *r = &f->rules[rule];
	const struct alt *a;
	size_t start = out->len, i;
	enum err e = ERR_OK;

	if (depth > FILLER_MAX_DEPTH)
		return diag_fail(d, ERR_INTERNAL, "grammar rule '%.*s' recurses too deep",
				 (int)r->namelen, r->name);
	if (r->n == 0)
		return diag_fail(d, ERR_INTERNAL, "grammar rule '%.*s' is empty",
				 (int)r->namelen, r->name);
	a = &f->alts[r->first + prng_below(&f->prng, r->n)];
	for (i = 0; i < a->n && !e; i++)
		e = expand_part(f, &f->parts[a->first + i], depth, out, d);
	if (!e && cap && out->len > start && out->data[start] >= 'a' &&
	    out->data[start] <= 'z')
		out->data[start] = (char)(out->data[start] - 'a' + 'A');
	return e;
}

/* ---- uniqueness ------------------------------------------------------- */

/* FNV-1a, 64-bit; 0 is reserved for empty slots. */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
	return h ? h : 1;
}

/* Inserts `h`; returns 1 when it was new, 0 when seen before, -1 on ERR_NOMEM. */
static int seen_insert(struct filler *f, uint64_t h)
{
	size_t i, mask;

	if (2 * (f->nseen + 1) > f->capseen) {
		size_t ncap = f->capseen ? 2 * f->capseen : 4096, j;
		uint64_t *t = mem_calloc(ncap, sizeof(*t));

		if (!t)
			return -1;
		for (j = 0; j < f->capseen; j++) {
			if (!f->seen[j])
				continue;
			for (i = f->seen[j] & (ncap - 1); t[i]; i = (i + 1) & (ncap - 1))
				;
			t[i] = f->seen[j];
		}
		mem_free(f->seen);
		f->seen = t;
		f->capseen = ncap;
	}
	mask = f->capseen - 1;
	for (i = h & mask; f->seen[i]; i = (i + 1) & mask)
		if (f->seen[i] == h)
			return 0;
	f->seen[i] = h;
	f->nseen++;
	return 1;
}

/* Expands `rule` into the scratch buffer until the result is new. */
static enum err expand_unique(struct filler *f, size_t rule, int cap,
			      struct diag *d)
{
	int tries, fresh;
	enum err e;

	for (tries = 0; tries < MAX_RETRIES; tries++) {
		buf_reset(&f->scratch);
		e = expand(f, rule, cap, 0, &f->scratch, d);
		if (e)
			return e;
		fresh = seen_insert(f, hash_bytes(f->scratch.data, f->scratch.len));
		if (fresh < 0)
			return ERR_NOMEM;
		if (fresh)
			return ERR_OK;
	}
	return diag_fail(d, ERR_INTERNAL, "grammar rule '%.*s' has no new expansion left",
			 (int)f->rules[rule].namelen, f->rules[rule].name);
}

/* ---- projects and checks ---------------------------------------------- */

/* Calls `fn` for each name line of data/projects.txt. */
static enum err each_project(struct filler *f, int store, size_t *count,
			     struct diag *d)
{
	const struct embed_file *ef = embed_find("data/projects.txt");
	const char *s, *end, *nl;
	size_t n, i;

	if (!ef)
		return diag_fail(d, ERR_INTERNAL, "embedded 'data/projects.txt' is missing");
	*count = 0;
	for (s = (const char *)ef->data, end = s + ef->len; s < end; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		n = (size_t)(nl - s);
		if (!n || s[0] == '#')
			continue;
		for (i = 0; i < n; i++)
			if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
				n = 0;
		if (n < NAME_MIN || n > 40)
			return diag_fail(d, ERR_INTERNAL,
					 "project name '%.*s' is not 5 to 40 ASCII letters",
					 (int)(nl - s), s);
		if (store) {
			char *p = mem_strndup(s, n), *q = mem_strndup(s, n);

			f->projects[*count] = p;
			f->lower[*count] = q;
			f->nprojects = *count + 1;
			if (!p || !q)
				return ERR_NOMEM;
			for (i = 0; i < n; i++)
				if (q[i] >= 'A' && q[i] <= 'Z')
					q[i] = (char)(q[i] - 'A' + 'a');
		}
		(*count)++;
	}
	return ERR_OK;
}

static enum err load_projects(struct filler *f, struct diag *d)
{
	size_t n;
	enum err e = each_project(f, 0, &n, d);

	if (e)
		return e;
	f->projects = mem_calloc(n ? n : 1, sizeof(char *));
	f->lower = mem_calloc(n ? n : 1, sizeof(char *));
	if (!f->projects || !f->lower)
		return ERR_NOMEM;
	return each_project(f, 1, &n, d);
}

static int is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static int is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || is_upper(c);
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int lc(char c)
{
	return is_upper(c) ? c - 'A' + 'a' : c;
}

/* Whether `name` (any case) starts at `s`, within `n` bytes. */
static int name_at(const char *s, size_t n, const char *name)
{
	size_t i;

	for (i = 0; name[i]; i++)
		if (i >= n || lc(s[i]) != lc(name[i]))
			return 0;
	return 1;
}

/* Index of the three letters at `s` in a 26^3 table. */
static int tri_index(const char *s)
{
	return ((lc(s[0]) - 'a') * 26 + (lc(s[1]) - 'a')) * 26 + (lc(s[2]) - 'a');
}

static int all_letters(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_letter(s[i]))
			return 0;
	return 1;
}

/* Digits: never two in a row, never next to a capital or a hyphen. */
static int code_like_at(const char *t, size_t len, size_t i)
{
	if (!is_digit(t[i]))
		return 0;
	if (i + 1 < len && (is_digit(t[i + 1]) || is_upper(t[i + 1]) || t[i + 1] == '-'))
		return 1;
	return i > 0 && (is_upper(t[i - 1]) || t[i - 1] == '-');
}

/* Looks for any name (lower-case `lower`, then `extra`) inside the letter run
 * [i, j) of `text`, prefiltered by the names' first three letters. */
static const char *name_in_run(const struct filler *f, const unsigned char *tri,
			       const char *text, size_t i, size_t j,
			       const char *const *extra, size_t nextra, size_t shortest)
{
	size_t p, k;

	for (p = i; p + shortest <= j; p++) {
		if (!tri[tri_index(text + p)])
			continue;
		for (k = 0; k < f->nprojects + nextra; k++) {
			const char *name = k < f->nprojects ? f->lower[k] : extra[k - f->nprojects];

			if (name_at(text + p, j - p, name))
				return name;
		}
	}
	return NULL;
}

enum err filler_check(const struct filler *f, const char *text, size_t len,
		      const char *const *extra, size_t nextra, struct diag *d)
{
	unsigned char *tri = mem_calloc(26 * 26 * 26, 1);
	size_t i, j, k, shortest = 40;
	const char *hit;
	enum err e = ERR_OK;

	if (!tri)
		return diag_fail(d, ERR_NOMEM, "out of memory checking filler");
	for (k = 0; k < f->nprojects + nextra; k++) {
		const char *name = k < f->nprojects ? f->lower[k] : extra[k - f->nprojects];
		size_t n = strlen(name);

		if (n >= 3 && all_letters(name, 3)) {
			tri[tri_index(name)] = 1;
			shortest = n < shortest ? n : shortest;
		}
	}
	for (i = 0; i < len && !e;) {
		if (code_like_at(text, len, i)) {
			e = diag_fail(d, ERR_INPUT, "filler has a code-like string '%.*s' at byte %zu",
				      (int)(len - i < 8 ? len - i : 8), text + i, i);
			break;
		}
		if (!is_letter(text[i])) {
			i++;
			continue;
		}
		for (j = i; j < len && is_letter(text[j]); j++)
			;
		if (j - i >= shortest &&
		    (hit = name_in_run(f, tri, text, i, j, extra, nextra, shortest)) != NULL)
			e = diag_fail(d, ERR_INPUT, "filler has the project name '%s' near byte %zu",
				      hit, i);
		i = j;
	}
	mem_free(tri);
	return e;
}

/* The grammars themselves must be clean; prose ones may hold no digit. */
static enum err check_grammar(struct filler *f, const char *file, int digits_ok,
			      struct diag *d)
{
	const struct embed_file *ef = embed_find(file);
	size_t i;

	if (!ef)
		return diag_fail(d, ERR_INTERNAL, "embedded grammar '%s' is missing", file);
	for (i = 0; i < ef->len && !digits_ok; i++)
		if (is_digit((char)ef->data[i]))
			return diag_fail(d, ERR_INTERNAL, "grammar '%s' has a digit at byte %zu",
					 file, i);
	if (filler_check(f, (const char *)ef->data, ef->len, NULL, 0, d)) {
		diag_prefix(d, "grammar '%s'", file);
		return d ? d->code : ERR_INTERNAL;
	}
	return ERR_OK;
}

static enum err rule_index(struct filler *f, const char *name, size_t *out,
			   struct diag *d)
{
	long r = find_rule(f, name, strlen(name));

	if (r < 0)
		return diag_fail(d, ERR_INTERNAL, "grammar rule '%s' is missing", name);
	*out = (size_t)r;
	return ERR_OK;
}

static const char *const grammars[] = {"data/en.grammar", "data/zh.grammar",
				       "data/code.grammar"};

static enum err load(struct filler *f, struct diag *d)
{
	enum err e = load_projects(f, d);
	size_t i;

	for (i = 0; !e && i < 3; i++)
		e = check_grammar(f, grammars[i], i == 2, d);
	for (i = 0; !e && i < 3; i++)
		e = parse_grammar(f, grammars[i], 0, d);
	for (i = 0; !e && i < 3; i++)
		e = parse_grammar(f, grammars[i], 1, d);
	if (!e)
		e = rule_index(f, "sentence", &f->r_sentence, d);
	if (!e)
		e = rule_index(f, "short", &f->r_short, d);
	if (!e)
		e = rule_index(f, "zh_sentence", &f->r_zh, d);
	if (!e)
		e = rule_index(f, "zh_short", &f->r_zh_short, d);
	if (!e)
		e = rule_index(f, "function", &f->r_function, d);
	if (!e)
		e = rule_index(f, "comment", &f->r_comment, d);
	if (!e)
		e = rule_index(f, "comment_short", &f->r_comment_short, d);
	if (!e)
		e = rule_index(f, "word", &f->r_word, d);
	if (e == ERR_INPUT) /* a dirty grammar is our bug, not the user's input */
		d->code = e = ERR_INTERNAL;
	return e;
}

enum err filler_new(enum filler_kind kind, uint64_t seed, uint64_t stream,
		    struct filler **out, struct diag *d)
{
	struct filler *f = mem_calloc(1, sizeof(*f));
	enum err e;

	*out = NULL;
	if (!f)
		return diag_fail(d, ERR_NOMEM, "out of memory loading the filler grammars");
	f->kind = kind;
	prng_init(&f->prng, seed, stream);
	buf_init(&f->pool, (size_t)1 << 24);
	buf_init(&f->scratch, (size_t)1 << 20);
	e = load(f, d);
	if (e == ERR_NOMEM)
		diag_fail(d, e, "out of memory loading the filler grammars");
	if (e) {
		filler_free(f);
		return e;
	}
	*out = f;
	return ERR_OK;
}

void filler_free(struct filler *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nprojects; i++) {
		mem_free(f->projects[i]);
		mem_free(f->lower[i]);
	}
	mem_free(f->projects);
	mem_free(f->lower);
	mem_free(f->rules);
	mem_free(f->alts);
	mem_free(f->parts);
	mem_free(f->seen);
	buf_release(&f->pool);
	buf_release(&f->scratch);
	mem_free(f);
}

void filler_reseed(struct filler *f, uint64_t seed, uint64_t stream)
{
	prng_init(&f->prng, seed, stream);
	if (f->seen)
		memset(f->seen, 0, f->capseen * sizeof(*f->seen));
	f->nseen = 0;
	memset(f->bind, 0, sizeof(f->bind));
	buf_reset(&f->scratch);
}

enum filler_kind filler_kind_of(const struct filler *f)
{
	return f->kind;
}

size_t filler_nprojects(const struct filler *f)
{
	return f->nprojects;
}

const char *filler_project(const struct filler *f, size_t i)
{
	return i < f->nprojects ? f->projects[i] : NULL;
}

enum filler_lang filler_tail_lang(const struct filler *f)
{
	return f->kind == FILLER_ZH ? FILLER_LANG_ZH :
	       f->kind == FILLER_CODE ? FILLER_LANG_COMMENT : FILLER_LANG_EN;
}

enum err filler_piece(struct filler *f, enum filler_lang lang, int first,
		      int brief, struct buf *out, struct diag *d)
{
	static const char *const open[] = {"", "", "// "};
	static const char *const sep[] = {" ", "", "\n// "};
	size_t rule = lang == FILLER_LANG_EN ? (brief ? f->r_short : f->r_sentence) :
		      lang == FILLER_LANG_ZH ? (brief ? f->r_zh_short : f->r_zh) :
		      (brief ? f->r_comment_short : f->r_comment);
	enum err e = expand_unique(f, rule, lang == FILLER_LANG_COMMENT, d);

	if (!e)
		e = buf_puts(out, first ? open[lang] : sep[lang]);
	if (!e)
		e = buf_append(out, f->scratch.data, f->scratch.len);
	if (!e && lang == FILLER_LANG_COMMENT)
		e = buf_putc(out, '.');
	return e == ERR_NOMEM ? diag_fail(d, e, "out of memory generating filler") : e;
}

enum err filler_word(struct filler *f, int first, struct buf *out,
		     struct diag *d)
{
	enum err e = first ? ERR_OK : buf_putc(out, ' ');

	if (!e)
		e = expand(f, f->r_word, first, 0, out, d);
	return e == ERR_NOMEM ? diag_fail(d, e, "out of memory generating filler") : e;
}

static enum err function_paragraph(struct filler *f, struct buf *out,
				   struct diag *d)
{
	enum err e = expand_unique(f, f->r_function, 0, d);
	const char *s = f->scratch.data;
	size_t n = f->scratch.len;

	if (e)
		return e;
	if (n < 3 || s[0] == ' ' || s[0] == '\t' || s[0] == '\n' ||
	    s[n - 1] != '\n' || s[n - 2] != '\n' ||
	    (strstr(s, "\n\n") != s + n - 2))
		return diag_fail(d, ERR_INTERNAL,
				 "code grammar made a function that whose only blank line is not its end");
	return buf_append(out, s, n) ? diag_fail(d, ERR_NOMEM, "out of memory generating filler")
				     : ERR_OK;
}

enum err filler_paragraph(struct filler *f, struct buf *out, struct diag *d)
{
	enum filler_lang lang = filler_tail_lang(f);
	long i, n;
	enum err e = ERR_OK;

	if (f->kind == FILLER_MIXED) {
		static const enum filler_lang pick[4] = {
			FILLER_LANG_EN, FILLER_LANG_EN, FILLER_LANG_ZH, FILLER_LANG_COMMENT};

		lang = pick[prng_below(&f->prng, 4)];
	}
	if (lang == FILLER_LANG_COMMENT)
		return function_paragraph(f, out, d);
	n = lang == FILLER_LANG_ZH ? prng_range(&f->prng, 3, 6) : prng_range(&f->prng, 3, 7);
	for (i = 0; i < n && !e; i++)
		e = filler_piece(f, lang, i == 0, 0, out, d);
	if (!e && buf_puts(out, "\n\n"))
		e = diag_fail(d, ERR_NOMEM, "out of memory generating filler");
	return e;
}
