/*
 * haystack — needle documents of an exact token length; see haystack.h.
 *
 * Why counting chunks is exact: the byte-level BPE pre-tokenizers of DeepSeek
 * V3, Qwen2/3, Llama 3 and GPT-4o split "\n\n" into its own piece (or end the
 * punctuation piece before it with it: ` ?[^\s\p{L}\p{N}]+[\r\n]*`), and a
 * piece never continues past a newline into a non-space character, so a chunk
 * that ends in "\n\n" and a chunk that starts with a non-space are tokenized
 * as if alone. BPE merges never cross pre-token boundaries, so the count of
 * the joined text is the sum of the counts. The final full count checks this
 * for the tokenizer at hand instead of trusting it.
 */
#include "haystack.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filler.h"
#include "base/json.h"
#include "base/mem.h"
#include "prng.h"

#define MIN_SEG 12        /* smallest non-empty filler segment, in tokens */
#define BULK_MIN 320      /* below this many tokens, fit sentence by sentence */
#define BULK_RESERVE 96   /* whole paragraphs leave at least this much */
#define BATCH_MAX 16384   /* tokens counted in one call at most */
#define PAIR_MIN 2048     /* smallest batch worth counting on a second thread */
#define THREAD_MIN_BYTES ((size_t)64 << 10) /* smallest prompt whose final count
					      * runs on a thread: below it, starting
					      * one (a stack and a malloc arena
					      * mapped and unmapped) costs more than
					      * the check it overlaps, and a load
					      * case builds a prompt per request */
#define TAIL_SENTENCES 6  /* sentences in a tail paragraph at most */
#define MISSES 64         /* sentences tried before closing a tail paragraph */
#define FIRST_MISSES 400  /* sentences tried to hit a small remainder exactly */
#define WORDS_MAX 256     /* words in a last-resort paragraph */
#define WORD_TRIES 4000   /* words tried for it */
#define MAX_ROUNDS 4      /* full counts before giving up on exactness */
#define MAX_ITEMS (HAYSTACK_MAX_NEEDLES + HAYSTACK_MAX_DISTRACTORS)
#define SENTINEL "@@needle-document@@"

struct chunk {
	size_t off;    /* byte offset in the document */
	size_t tokens;
};

struct item {
	struct haystack_needle *n; /* in the output's needle or distractor array */
	char text[256];            /* the sentence and "\n\n" */
	size_t len;
	long permille;             /* depth in tenths of a percent */
	int order;                 /* tie-break for equal depths */
	long budget;               /* filler tokens right before it */
};

struct gen {
	const struct haystack_opts *o;
	struct haystack *h;
	struct diag *d;
	struct filler *f;
	struct prng prng;
	struct buf doc;
	struct chunk *chunks;
	size_t nchunks, capchunks;
	struct item items[MAX_ITEMS];
	int nitems;
	size_t tokens;       /* document tokens so far (sum of chunk counts) */
	long doc_budget;     /* document tokens wanted */
	size_t fixed_tokens; /* prefix + suffix tokens */
	double bytes_per_token; /* of the filler so far, to size batches */
	const char *nearmiss[HAYSTACK_MAX_DISTRACTORS];
	int nnearmiss;
};

static const char *const phr_en[] = {
	"The access code for project %s is %s.",
	"Project %s uses the access code %s.",
	"For project %s, the access code is %s.",
	"Remember this: the access code of project %s is %s.",
	"Access code for project %s: %s.",
	"The team behind project %s was given the access code %s.",
};
static const char *const phr_zh[] = {
	"项目 %s 的访问代码是 %s。",
	"请记住，项目 %s 的访问代码为 %s。",
	"项目 %s 使用的访问代码是 %s。",
};

/* ---- options ---------------------------------------------------------- */

static enum err check_depths(const int *depth, int n, struct diag *d)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (depth[i] < 0 || depth[i] > 100)
			return diag_fail(d, ERR_INPUT, "depth '%d' is outside 0..100", depth[i]);
		for (j = 0; j < i; j++)
			if (depth[j] == depth[i])
				return diag_fail(d, ERR_INPUT,
						 "depth '%d' is given twice: two needles cannot share a depth",
						 depth[i]);
	}
	return ERR_OK;
}

/* Resolves the needle count and depths (default 10,50,90; K needles without
 * depths are spread evenly over 10..90). */
static enum err resolve_depths(const struct haystack_opts *o, int *depth, int *k,
			       struct diag *d)
{
	int i;

	*k = 0;
	if (o->plain)
		return ERR_OK;
	*k = o->needles ? o->needles : o->ndepths ? o->ndepths : 3;
	if (*k < 1 || *k > HAYSTACK_MAX_NEEDLES)
		return diag_fail(d, ERR_INPUT, "needles '%d' is outside 1..%d", *k,
				 HAYSTACK_MAX_NEEDLES);
	if (o->ndepths && o->ndepths != *k)
		return diag_fail(d, ERR_INPUT, "%d needles but %d depths: give one depth per needle",
				 *k, o->ndepths);
	for (i = 0; i < *k; i++)
		depth[i] = o->ndepths ? o->depths[i] : *k == 1 ? 50 : 10 + 80 * i / (*k - 1);
	return check_depths(depth, *k, d);
}

static enum err check_opts(const struct haystack_opts *o, struct diag *d)
{
	if (!o->tok || (!o->tpl && !o->raw) || (o->raw && !o->plain))
		return diag_fail(d, ERR_INTERNAL, "haystack needs a tokenizer and a template");
	if (o->plain && (o->distractors || o->needles || o->ndepths || o->question))
		return diag_fail(d, ERR_INTERNAL, "a plain document has no needles or question");
	if (o->tokens <= 0)
		return diag_fail(d, ERR_INPUT, "tokens '%ld' must be positive", o->tokens);
	if (o->distractors < 0 || o->distractors > HAYSTACK_MAX_DISTRACTORS)
		return diag_fail(d, ERR_INPUT, "distractors '%d' is outside 0..%d",
				 o->distractors, HAYSTACK_MAX_DISTRACTORS);
	if (o->ask < 0)
		return diag_fail(d, ERR_INPUT, "ask '%d' must not be negative", o->ask);
	if (o->question && !*o->question)
		return diag_fail(d, ERR_INPUT, "the question must not be empty");
	if (o->preface && o->plain)
		return diag_fail(d, ERR_INTERNAL, "a plain document has no preface");
	if (o->code_shift < 0)
		return diag_fail(d, ERR_INTERNAL, "a code shift must not be negative");
	return ERR_OK;
}

/* ---- needles ---------------------------------------------------------- */

/* Codes look like "7QX-4821-KB": three of capitals and digits (at least one
 * digit), four digits, two capitals; no 0/O or 1/I look-alikes. The final
 * two capitals are the drawn pair moved `shift` places on (of 24 * 24): the
 * same draws, so a shift changes nothing else, and a one-to-one map, so
 * codes that differ stay different. */
static void make_code(struct prng *p, int shift, char out[32])
{
	static const char up[] = "ABCDEFGHJKLMNPQRSTUVWXYZ";
	static const char mix[] = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
	const unsigned nup = sizeof(up) - 1;
	int i, digit = (int)prng_below(p, 3);
	unsigned pair;

	for (i = 0; i < 3; i++)
		out[i] = i == digit ? (char)('2' + prng_below(p, 8))
				    : mix[prng_below(p, sizeof(mix) - 1)];
	out[3] = '-';
	for (i = 4; i < 8; i++)
		out[i] = (char)('0' + prng_below(p, 10));
	out[8] = '-';
	pair = (unsigned)prng_below(p, nup) * nup;
	pair = (pair + (unsigned)prng_below(p, nup) + (unsigned)shift) % (nup * nup);
	out[9] = up[pair / nup];
	out[10] = up[pair % nup];
	out[11] = '\0';
}

static int code_taken(const struct gen *g, const char *code)
{
	int i;

	for (i = 0; i < g->h->nneedles; i++)
		if (!strcmp(g->h->needle[i].code, code))
			return 1;
	for (i = 0; i < g->h->ndistractors; i++)
		if (!strcmp(g->h->distractor[i].code, code))
			return 1;
	return 0;
}

/* A code unlike any already given out (`out` is not yet counted as one). */
static void new_code(struct gen *g, char out[32])
{
	char c[32];

	do
		make_code(&g->prng, g->o->code_shift, c);
	while (code_taken(g, c));
	memcpy(out, c, sizeof(c));
}

static int is_vowel(char c)
{
	return c && strchr("aeiou", c) != NULL;
}

/* Whether `a` contains `b`, ignoring ASCII case. */
static int contains_ci(const char *a, const char *b)
{
	size_t i, j, la = strlen(a), lb = strlen(b);

	for (i = 0; i + lb <= la; i++) {
		for (j = 0; j < lb; j++) {
			char x = a[i + j], y = b[j];

			if ((x | 0x20) != (y | 0x20))
				break;
		}
		if (j == lb)
			return 1;
	}
	return 0;
}

/* A near-miss of `name`: one vowel after the first letter swapped for
 * another, never a real project name and never containing one. */
static int near_miss(struct gen *g, const char *name, char out[64])
{
	size_t len = strlen(name), i, tries;

	for (tries = 0; tries < 50; tries++) {
		size_t at = 1 + (size_t)prng_below(&g->prng, len - 1), k;
		int ok = 1;

		memcpy(out, name, len + 1);
		if (!is_vowel(out[at]))
			continue;
		do
			out[at] = "aeiou"[prng_below(&g->prng, 5)];
		while (out[at] == name[at]);
		for (k = 0; k < filler_nprojects(g->f) && ok; k++)
			ok = !contains_ci(out, filler_project(g->f, k));
		for (i = 0; i < (size_t)g->h->ndistractors && ok; i++)
			ok = strcmp(out, g->h->distractor[i].project) != 0;
		if (ok)
			return 1;
	}
	return 0;
}

/* Picks project names (needles first, then the other projects for
 * distractors), codes, the asked subset and each needle's sentence. */
static enum err pick_needles(struct gen *g, const int *depth, int k)
{
	struct haystack *h = g->h;
	size_t np = filler_nprojects(g->f);
	int order[128], ask = g->o->ask ? g->o->ask : k, i;

	if (ask > k)
		return diag_fail(g->d, ERR_INPUT, "ask '%d' is more than the %d needles", ask, k);
	if ((size_t)k + (size_t)g->o->distractors > np || np > 128)
		return diag_fail(g->d, ERR_INPUT,
				 "%d needles and %d distractors need more than the %zu project names",
				 k, g->o->distractors, np);
	for (i = 0; i < (int)np; i++)
		order[i] = i;
	prng_shuffle_int(&g->prng, order, np);
	for (i = 0; i < k; i++) {
		struct haystack_needle *n = &h->needle[i];

		h->nneedles = i + 1;
		snprintf(n->project, sizeof(n->project), "%s", filler_project(g->f, (size_t)order[i]));
		new_code(g, n->code);
		n->depth = depth[i];
	}
	for (i = 0; i < k; i++)
		order[i] = i;
	prng_shuffle_int(&g->prng, order, (size_t)k);
	for (i = 0; i < ask; i++)
		h->needle[order[i]].asked = 1;
	return ERR_OK;
}

static enum err pick_distractors(struct gen *g)
{
	struct haystack *h = g->h;
	int order[128], i, other = 0;
	size_t np = filler_nprojects(g->f), j;

	for (i = 0; i < (int)np; i++)
		order[i] = i;
	prng_shuffle_int(&g->prng, order, np);
	for (i = 0; i < g->o->distractors; i++) {
		struct haystack_needle *n = &h->distractor[i];
		const char *base = h->needle[i % h->nneedles].project;

		if (i % 2 == 0 && near_miss(g, base, n->project)) {
			n->near_miss = 1;
			g->nearmiss[g->nnearmiss++] = n->project;
		} else {
			/* another project: one not used by any needle */
			for (;; other++) {
				int used = 0, k;

				for (k = 0; k < h->nneedles; k++)
					used |= !strcmp(h->needle[k].project,
							filler_project(g->f, (size_t)order[other]));
				if (!used)
					break;
			}
			j = (size_t)order[other++];
			snprintf(n->project, sizeof(n->project), "%s", filler_project(g->f, j));
		}
		new_code(g, n->code);
		h->ndistractors++;
	}
	return ERR_OK;
}

/* Writes each needle's and distractor's sentence and counts it. */
static enum err make_items(struct gen *g)
{
	struct haystack *h = g->h;
	int i, zh = g->o->filler && !strcmp(g->o->filler, "zh");
	int mixed = g->o->filler && !strcmp(g->o->filler, "mixed");
	enum err e = ERR_OK;

	for (i = 0; i < h->nneedles + h->ndistractors && !e; i++) {
		struct item *it = &g->items[g->nitems];
		int is_needle = i < h->nneedles;
		int use_zh = zh || (mixed && prng_below(&g->prng, 4) == 0);
		const char *fmt = use_zh ? phr_zh[prng_below(&g->prng, 3)]
					 : phr_en[prng_below(&g->prng, 6)];

		it->n = is_needle ? &h->needle[i] : &h->distractor[i - h->nneedles];
		it->order = i;
		it->permille = is_needle ? 10L * it->n->depth
					 : (long)prng_range(&g->prng, 0, 1000);
		it->n->depth = (int)(it->permille / 10);
		snprintf(it->text, sizeof(it->text) - 2, fmt, it->n->project, it->n->code);
		it->len = strlen(it->text);
		memcpy(it->text + it->len, "\n\n", 3);
		it->len += 2;
		e = tok_count(g->o->tok, it->text, it->len, &it->n->tokens, g->d);
		g->nitems++;
	}
	return e;
}

static int cmp_items(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->permille != y->permille)
		return x->permille < y->permille ? -1 : 1;
	return x->order - y->order;
}

/* ---- the template ----------------------------------------------------- */

static enum err question_text(struct gen *g, struct buf *q)
{
	int i, first = 1;
	enum err e;

	if (g->o->plain)
		return ERR_OK;
	e = buf_puts(q, "Requested projects: ");
	for (i = 0; i < g->h->nneedles && !e; i++) {
		int k = g->o->ask_reversed ? g->h->nneedles - 1 - i : i;
		if (!g->h->needle[k].asked)
			continue;
		e = buf_printf(q, "%s%s", first ? "" : ", ", g->h->needle[k].project);
		first = 0;
	}
	if (!e)
		e = buf_printf(q, ".\n%s", g->o->question ? g->o->question : HAYSTACK_QUESTION);
	return e ? diag_fail(g->d, e, "out of memory writing the question") : ERR_OK;
}

/* One user message holding the preface, `doc` (len bytes) and the question. */
static enum err make_messages(struct gen *g, const char *doc, size_t len,
			      cJSON **out)
{
	size_t qlen = strlen(g->h->question);
	size_t plen = g->o->preface ? strlen(g->o->preface) : 0;
	char *content = mem_alloc(plen + len + qlen + 1);
	struct json_build jb;
	cJSON *m;

	*out = NULL;
	if (!content)
		return diag_fail(g->d, ERR_NOMEM, "out of memory building the messages");
	memcpy(content, g->o->preface ? g->o->preface : "", plen);
	memcpy(content + plen, doc, len);
	memcpy(content + plen + len, g->h->question, qlen + 1);
	json_build_init(&jb);
	*out = json_new_arr(&jb);
	m = json_add_obj(&jb, *out, NULL);
	json_add_str(&jb, m, "role", "user");
	json_add_str(&jb, m, "content", content);
	mem_free(content);
	return json_build_end(&jb, out, "the messages", g->d);
}

static enum err render(struct gen *g, const char *doc, size_t len,
		       struct buf *out, cJSON **keep)
{
	cJSON *msgs = NULL;
	enum err e;

	if (g->o->raw)
		return buf_append(out, doc, len) ? diag_fail(g->d, ERR_NOMEM, "out of memory rendering")
						 : ERR_OK;
	e = make_messages(g, doc, len, &msgs);
	if (!e)
		e = tpl_render_ex(g->o->tpl, msgs, NULL, g->o->kwargs, 1, g->o->render, out, g->d);
	if (keep && !e)
		*keep = msgs;
	else
		cJSON_Delete(msgs);
	return e;
}

/* Counts the template and question around the document by rendering a
 * sentinel in its place. */
static enum err measure_rendered(struct gen *g, size_t *pre, size_t *post)
{
	struct buf p;
	const char *at;
	enum err e;

	buf_init(&p, BUF_MAX_DEFAULT);
	e = render(g, SENTINEL, strlen(SENTINEL), &p, NULL);
	if (e)
		goto out;
	at = strstr(p.data, SENTINEL);
	if (!at || strstr(at + 1, SENTINEL)) {
		e = diag_fail(g->d, ERR_INTERNAL, "template '%s' does not keep the user content intact",
			      tpl_name(g->o->tpl));
		goto out;
	}
	e = tok_count(g->o->tok, p.data, (size_t)(at - p.data), pre, g->d);
	if (!e)
		e = tok_count(g->o->tok, at + strlen(SENTINEL),
			      p.len - (size_t)(at - p.data) - strlen(SENTINEL), post, g->d);
out:
	buf_release(&p);
	return e;
}

/* The tokens around the document: the rendered template's, or for a raw
 * prompt the ones the server adds. */
static enum err measure_template(struct gen *g)
{
	size_t pre = 0, post = 0;
	enum err e = ERR_OK;

	if (g->o->raw)
		pre = g->o->raw_extra > 0 ? (size_t)g->o->raw_extra : 0;
	else
		e = measure_rendered(g, &pre, &post);
	g->h->prefix_tokens = pre;
	g->fixed_tokens = pre + post;
	if (!e && (long)g->fixed_tokens >= g->o->tokens)
		e = diag_fail(g->d, ERR_INPUT,
			      "tokens '%ld' is too small: the template and question alone take %zu",
			      g->o->tokens, g->fixed_tokens);
	return e;
}

/* ---- planning --------------------------------------------------------- */

/* Sets each item's filler budget so that its token offset is its depth of
 * (document - its own tokens), every budget is 0 or at least MIN_SEG, and the
 * budgets plus the items fill the document exactly; returns the last
 * segment's budget in `*last`. */
static enum err plan(struct gen *g, long *last)
{
	long D = g->doc_budget, pos = 0, b[MAX_ITEMS + 1], items = 0;
	int i, n = g->nitems;

	for (i = 0; i < n; i++)
		items += (long)g->items[i].n->tokens;
	if (D < items)
		return diag_fail(g->d, ERR_INPUT,
				 "more needles than the document can hold: %ld tokens of document, "
				 "the needle and distractor sentences take %ld", D, items);
	for (i = 0; i < n; i++) {
		long t = (long)g->items[i].n->tokens;
		long target = (g->items[i].permille * (D - t) + 500) / 1000;

		b[i] = target - pos > 0 ? target - pos : 0;
		pos += b[i] + t;
	}
	b[n] = D - pos;
	/* A budget the filler cannot meet (negative, or 1..MIN_SEG-1 tokens) is
	 * handed to the segment before it, moving one needle by a few tokens. */
	for (i = n; i > 0; i--)
		if (b[i] < 0 || (b[i] > 0 && b[i] < MIN_SEG)) {
			b[i - 1] += b[i];
			b[i] = 0;
		}
	if (b[0] < 0)
		return diag_fail(g->d, ERR_INPUT, "more needles than the document can hold");
	if (b[0] > 0 && b[0] < MIN_SEG)
		return diag_fail(g->d, ERR_INPUT,
				 "tokens '%ld' leaves %ld tokens of filler: it must be 0 or at least %d",
				 g->o->tokens, b[0], MIN_SEG);
	for (i = 0; i < n; i++)
		g->items[i].budget = b[i];
	*last = b[n];
	return ERR_OK;
}

/* ---- assembly --------------------------------------------------------- */

static enum err add_chunk(struct gen *g, size_t off, size_t tokens)
{
	if (g->nchunks == g->capchunks) {
		size_t cap = g->capchunks ? 2 * g->capchunks : 1024;
		struct chunk *c = mem_realloc(g->chunks, cap * sizeof(*c));

		if (!c)
			return diag_fail(g->d, ERR_NOMEM, "out of memory assembling the document");
		g->chunks = c;
		g->capchunks = cap;
	}
	g->chunks[g->nchunks].off = off;
	g->chunks[g->nchunks++].tokens = tokens;
	g->tokens += tokens;
	return ERR_OK;
}

static enum err count_from(struct gen *g, size_t mark, size_t *c)
{
	return tok_count(g->o->tok, g->doc.data + mark, g->doc.len - mark, c, g->d);
}

static enum err nomem(struct gen *g)
{
	return diag_fail(g->d, ERR_NOMEM, "out of memory assembling the document");
}

/* Adds a paragraph of single words ending in ".", of exactly `*r` tokens:
 * the last resort when no sentence fits the remainder (tokenizers with small
 * vocabularies). Backtracks one word at a time when the next cannot land. */
static enum err word_paragraph(struct gen *g, long *r)
{
	size_t start = g->doc.len, marks[WORDS_MAX], c;
	int n = 0, tries = 0, total = 0;
	enum err e;

	while (total++ < WORD_TRIES) {
		size_t mark = g->doc.len;

		e = filler_word(g->f, n == 0, &g->doc, g->d);
		if (!e && buf_puts(&g->doc, ".\n\n"))
			e = nomem(g);
		if (!e)
			e = count_from(g, start, &c);
		if (e)
			return e;
		if ((long)c == *r) {
			*r = 0;
			return add_chunk(g, start, c);
		}
		buf_truncate(&g->doc, g->doc.len - 3);
		if ((long)c < *r && n < WORDS_MAX) {
			marks[n++] = mark;
			tries = 0;
			continue;
		}
		buf_truncate(&g->doc, mark);
		if (++tries > 40 && n > 0) {
			buf_truncate(&g->doc, marks[--n]);
			tries = 0;
		}
	}
	buf_truncate(&g->doc, start);
	return diag_fail(g->d, ERR_INPUT,
			 "cannot fill the last %ld tokens exactly with this tokenizer: "
			 "try another --tokens", *r);
}

/* Adds one paragraph built sentence by sentence, of at most `*r` tokens and
 * leaving 0 or at least MIN_SEG; subtracts its count from `*r`. */
static enum err tail_paragraph(struct gen *g, long *r)
{
	enum filler_lang lang = filler_tail_lang(g->f);
	size_t start = g->doc.len, have = 0, c;
	int n = 0, misses = 0;
	enum err e;

	for (;;) {
		size_t mark = g->doc.len;

		e = filler_piece(g->f, lang, n == 0, misses & 1, &g->doc, g->d);
		if (!e && buf_puts(&g->doc, "\n\n"))
			e = nomem(g);
		if (!e)
			e = count_from(g, start, &c);
		if (e)
			return e;
		if ((long)c == *r || ((long)c <= *r - MIN_SEG && n + 1 >= TAIL_SENTENCES)) {
			*r -= (long)c;
			return add_chunk(g, start, c);
		}
		if ((long)c <= *r - MIN_SEG) {
			n++;
			have = c;
			misses = 0;
			buf_truncate(&g->doc, g->doc.len - 2);
			continue;
		}
		buf_truncate(&g->doc, mark);
		misses++;
		if (n > 0 && misses >= MISSES) {
			if (buf_puts(&g->doc, "\n\n"))
				return nomem(g);
			*r -= (long)have;
			return add_chunk(g, start, have);
		}
		if (misses >= FIRST_MISSES) {
			buf_truncate(&g->doc, start);
			return word_paragraph(g, r);
		}
	}
}

/* Appends whole paragraphs until they hold about `want` tokens (at least one
 * paragraph), estimated from the bytes per token seen so far. */
static enum err generate(struct gen *g, long want)
{
	size_t mark = g->doc.len;
	enum err e;

	do
		e = filler_paragraph(g->f, &g->doc, g->d);
	while (!e && (double)(g->doc.len - mark) < (double)want * g->bytes_per_token);
	return e;
}

/* A count run on another thread (a loaded tokenizer may be shared). */
struct count_job {
	const struct tok *tok;
	const char *text;
	size_t len, count;
	enum err e;
	struct diag d;
	pthread_t thread;
	int started;
};

static void *count_job_main(void *arg)
{
	struct count_job *j = arg;

	j->e = tok_count(j->tok, j->text, j->len, &j->count, &j->d);
	return NULL;
}

/* Starts counting on a thread when `thread` says so, else (or if no thread
 * can start) counts right here; the result is the same either way. */
static void count_start(struct count_job *j, const struct tok *t,
			const char *text, size_t len, int thread)
{
	j->tok = t;
	j->text = text;
	j->len = len;
	j->count = 0;
	diag_init(&j->d);
	j->started = thread && pthread_create(&j->thread, NULL, count_job_main, j) == 0;
	if (!j->started)
		count_job_main(j);
}

static enum err count_finish(struct count_job *j, size_t *count, struct diag *d)
{
	if (j->started)
		pthread_join(j->thread, NULL);
	j->started = 0;
	*count = j->count;
	if (j->e)
		return diag_fail(d, j->e, "%s", j->d.msg);
	return ERR_OK;
}

static void learn_rate(struct gen *g, size_t bytes, size_t tokens)
{
	if (tokens)
		g->bytes_per_token = (double)bytes / (double)tokens;
}

/* Two batches of about `want` tokens each, counted at once (one on a
 * thread): counts are additive over paragraphs, so a batch needs one count,
 * and the decisions below depend only on the counts, never on timing.
 * Keeps what fits in `*r` (leaving BULK_RESERVE); returns 0 in `*kept` when
 * not even the first batch fits. */
static enum err batch_pair(struct gen *g, long want, long *r, int *kept)
{
	size_t m0 = g->doc.len, m1, ca = 0, cb = 0;
	struct count_job job;
	enum err e = generate(g, want);

	*kept = 0;
	m1 = g->doc.len;
	if (!e)
		e = generate(g, want);
	if (e)
		return e;
	count_start(&job, g->o->tok, g->doc.data + m0, m1 - m0, 1);
	e = count_from(g, m1, &cb);
	if (count_finish(&job, &ca, g->d) && !e)
		e = g->d->code;
	if (e)
		return e;
	learn_rate(g, g->doc.len - m0, ca + cb);
	if ((long)(ca + cb) <= *r - BULK_RESERVE) {
		*r -= (long)(ca + cb);
		*kept = 2;
		e = add_chunk(g, m0, ca);
		return e ? e : add_chunk(g, m1, cb);
	}
	buf_truncate(&g->doc, m1);
	if ((long)ca > *r - BULK_RESERVE) {
		buf_truncate(&g->doc, m0);
		return ERR_OK;
	}
	*r -= (long)ca;
	*kept = 1;
	return add_chunk(g, m0, ca);
}

/* One batch of about `want` tokens, kept when it fits. */
static enum err batch_one(struct gen *g, long want, long *r, int *kept)
{
	size_t mark = g->doc.len, c = 0;
	enum err e = generate(g, want);

	*kept = 0;
	if (!e)
		e = count_from(g, mark, &c);
	if (e)
		return e;
	learn_rate(g, g->doc.len - mark, c);
	if ((long)c > *r - BULK_RESERVE) {
		buf_truncate(&g->doc, mark);
		return ERR_OK;
	}
	*r -= (long)c;
	*kept = 1;
	return add_chunk(g, mark, c);
}

/* Appends filler of exactly `budget` tokens (0 or at least MIN_SEG): batches
 * of about half the remainder while it is large (in pairs while that is
 * worth a thread), then single sentences. */
static enum err fit(struct gen *g, long budget)
{
	long r = budget, want;
	int overshoots = 0, kept;
	enum err e = ERR_OK;

	while (!e && r >= BULK_MIN && overshoots < 8) {
		want = (r - BULK_RESERVE) / 2;
		if (want >= 2 * PAIR_MIN)
			e = batch_pair(g, want / 2 < BATCH_MAX ? want / 2 : BATCH_MAX, &r, &kept);
		else
			e = batch_one(g, want, &r, &kept);
		if (!e && !kept) {
			/* overshot: the next batch aims lower with the rate just learnt */
			overshoots++;
			if (want <= BULK_MIN)
				break;
		}
	}
	while (!e && r > 0)
		e = tail_paragraph(g, &r);
	return e;
}

static enum err assemble(struct gen *g)
{
	long last = 0;
	int i;
	enum err e = plan(g, &last);

	buf_reset(&g->doc);
	g->nchunks = 0;
	g->tokens = 0;
	for (i = 0; i < g->nitems && !e; i++) {
		struct item *it = &g->items[i];

		e = fit(g, it->budget);
		if (e)
			break;
		it->n->char_offset = g->doc.len;
		it->n->token_offset = g->tokens;
		if (buf_append(&g->doc, it->text, it->len))
			return nomem(g);
		e = add_chunk(g, it->n->char_offset, it->n->tokens);
	}
	if (!e)
		e = fit(g, last);
	return e;
}

/* ---- checks ----------------------------------------------------------- */

/* `hay` is NUL-terminated and holds no NUL (the tokenizer took it as text). */
static size_t occurrences(const char *hay, const char *needle)
{
	size_t k = 0, len = strlen(needle);
	const char *p = hay;

	while ((p = strstr(p, needle)) != NULL) {
		k++;
		p += len;
	}
	return k;
}

static size_t chunk_index(const struct gen *g, size_t off)
{
	size_t lo = 0, hi = g->nchunks;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->chunks[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The chunk before and after each sentence, counted together with it, give
 * the sum of their counts: the sentence did not merge with a neighbour. */
static enum err check_joins(struct gen *g, const struct haystack_needle *n,
			   struct diag *d)
{
	size_t ci = chunk_index(g, n->char_offset), from = ci ? ci - 1 : ci;
	size_t to = ci + 1 < g->nchunks ? ci + 1 : ci, i, sum = 0, c;
	size_t end = to + 1 < g->nchunks ? g->chunks[to + 1].off : g->doc.len;
	enum err e;

	for (i = from; i <= to; i++)
		sum += g->chunks[i].tokens;
	e = tok_count(g->o->tok, g->doc.data + g->chunks[from].off,
		      end - g->chunks[from].off, &c, d);
	if (!e && c != sum)
		e = diag_fail(d, ERR_UNSUPPORTED,
			      "the sentence for project '%s' merges with its neighbours "
			      "(%zu tokens together, %zu apart): this tokenizer does not count "
			      "paragraphs additively (add_prefix_space?)", n->project, c, sum);
	return e;
}

/* Checks the assembled document into `d` (not the build's diagnostic, so
 * that it can run beside the final count). */
static enum err verify(struct gen *g, struct diag *d)
{
	size_t from = 0;
	int i;
	enum err e = ERR_OK;

	for (i = 0; i < g->nitems && !e; i++) {
		const struct haystack_needle *n = g->items[i].n;
		size_t k = occurrences(g->doc.data, n->code);

		if (k != 1)
			return diag_fail(d, ERR_INTERNAL,
					 "code '%s' occurs %zu times in the document", n->code, k);
		e = filler_check(g->f, g->doc.data + from, n->char_offset - from,
				 g->nearmiss, (size_t)g->nnearmiss, d);
		from = n->char_offset + g->items[i].len;
		if (!e)
			e = check_joins(g, n, d);
	}
	if (!e)
		e = filler_check(g->f, g->doc.data + from, g->doc.len - from, g->nearmiss,
				 (size_t)g->nnearmiss, d);
	if (e == ERR_INPUT)
		d->code = e = ERR_INTERNAL; /* our filler, not the user's input */
	return e;
}

/* ---- build ------------------------------------------------------------ */

static enum err expected_answer(struct haystack *h, struct diag *d)
{
	struct json_build jb;
	int i;

	json_build_init(&jb);
	h->expected = json_new_obj(&jb);
	for (i = 0; i < h->nneedles; i++)
		if (h->needle[i].asked)
			json_add_str(&jb, h->expected, h->needle[i].project, h->needle[i].code);
	return json_build_end(&jb, &h->expected, "the expected answer", d);
}

static enum err setup(struct gen *g, const struct haystack_opts *o)
{
	enum filler_kind kind = FILLER_PROSE;
	int depth[HAYSTACK_MAX_NEEDLES], k;
	struct buf q;
	enum err e = check_opts(o, g->d);

	if (!e)
		e = resolve_depths(o, depth, &k, g->d);
	if (!e && o->filler)
		e = filler_kind_parse(o->filler, &kind, g->d);
	if (e)
		return e;
	prng_init(&g->prng, o->seed, 0);
	if (o->reuse && filler_kind_of(o->reuse) == kind)
		filler_reseed(g->f = o->reuse, o->seed, 1);
	else if (o->reuse)
		e = diag_fail(g->d, ERR_INTERNAL, "the filler kept is not a '%s' filler",
			      filler_kind_name(kind));
	else
		e = filler_new(kind, o->seed, 1, &g->f, g->d);
	if (!e)
		e = pick_needles(g, depth, k);
	if (!e)
		e = pick_distractors(g);
	buf_init(&q, 1 << 16);
	if (!e)
		e = question_text(g, &q);
	if (!e && !(g->h->question = buf_take(&q, NULL)))
		e = diag_fail(g->d, ERR_NOMEM, "out of memory writing the question");
	buf_release(&q);
	if (!e)
		e = measure_template(g);
	if (!e)
		e = make_items(g);
	if (!e)
		qsort(g->items, (size_t)g->nitems, sizeof(g->items[0]), cmp_items);
	g->doc_budget = o->tokens - (long)g->fixed_tokens;
	g->bytes_per_token = 4.0; /* a first guess; measured from the first batch */
	return e;
}

/* Assembles, renders and counts until the count is exact; the prompt is left
 * in `prompt` and its messages in the output. The final full count runs on a
 * thread while this one checks the document (verify), which does not depend
 * on the count; a round that misses the count discards its check. */
static enum err build_exact(struct gen *g, struct buf *prompt)
{
	struct count_job job;
	struct diag vd;
	size_t n = 0;
	int round;
	enum err e = ERR_OK, ve;

	for (round = 1; round <= MAX_ROUNDS && !e; round++) {
		e = assemble(g);
		buf_reset(prompt);
		cJSON_Delete(g->h->messages);
		g->h->messages = NULL;
		if (!e)
			e = render(g, g->doc.data, g->doc.len, prompt, &g->h->messages);
		if (e)
			return e;
		count_start(&job, g->o->tok, prompt->data, prompt->len,
			    prompt->len >= THREAD_MIN_BYTES);
		diag_init(&vd);
		ve = verify(g, &vd);
		e = count_finish(&job, &n, g->d);
		n += g->o->raw && g->o->raw_extra > 0 ? (size_t)g->o->raw_extra : 0;
		g->h->fit_rounds = round;
		g->h->prompt_tokens = n;
		if (!e && (long)n == g->o->tokens)
			return ve ? diag_fail(g->d, ve, "%s", vd.msg) : ERR_OK;
		g->doc_budget += g->o->tokens - (long)n;
	}
	if (e)
		return e;
	return diag_fail(g->d, ERR_INTERNAL,
			 "the prompt has %zu tokens, not %ld, after %d rounds: this tokenizer "
			 "does not count paragraph joins additively", n, g->o->tokens, MAX_ROUNDS);
}

enum err haystack_build(const struct haystack_opts *o, struct haystack *out,
			struct diag *d)
{
	struct gen g;
	struct buf prompt;
	enum err e;

	memset(out, 0, sizeof(*out));
	memset(&g, 0, sizeof(g));
	g.o = o;
	g.h = out;
	g.d = d;
	buf_init(&g.doc, BUF_MAX_DEFAULT);
	buf_init(&prompt, BUF_MAX_DEFAULT);
	e = setup(&g, o);
	if (!e)
		e = build_exact(&g, &prompt);
	if (!e)
		e = expected_answer(out, d);
	if (!e)
		e = io_sha256_hex(prompt.data, prompt.len, out->prompt_sha256, d);
	if (!e) {
		out->document_tokens = g.tokens;
		out->document = buf_take(&g.doc, &out->document_len);
		if (!out->document)
			e = diag_fail(d, ERR_NOMEM, "out of memory keeping the document");
	}
	buf_release(&prompt);
	buf_release(&g.doc);
	mem_free(g.chunks);
	if (g.f != o->reuse)
		filler_free(g.f);
	return e;
}

void haystack_release(struct haystack *h)
{
	if (!h)
		return;
	cJSON_Delete(h->messages);
	cJSON_Delete(h->expected);
	mem_free(h->document);
	mem_free(h->question);
	memset(h, 0, sizeof(*h));
}
