/* probesum — see probesum.h. */
#include <stdio.h>
#include <string.h>

#include "base/jget.h"
#include "base/json.h"
#include "base/md.h"
#include "keys.h"
#include "probesum.h"

static const int moduli[] = {2, 4, 8};

/* Adds `by` to o[key] (created at 0). */
static void bump(struct json_build *jb, cJSON *o, const char *key, double by)
{
	cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);

	if (n)
		cJSON_SetNumberValue(n, n->valuedouble + by);
	else
		json_add_num(jb, o, key, by);
}

/* Counts one jitter record into its residue row of every modulus. */
static void take_residue(struct json_build *jb, cJSON *res, const cJSON *rec,
			 const cJSON *probe)
{
	const cJSON *n;
	double found = 0, total = 0;
	size_t i;
	int pass = !strcmp(jget(rec, RK_VERDICT)->valuestring, "pass");

	cJSON_ArrayForEach(n, jget2(rec, RK_GRADE, RK_NEEDLES)) {
		total++;
		found += cJSON_IsTrue(jget(n, RK_OK));
	}
	for (i = 0; i < sizeof(moduli) / sizeof(moduli[0]); i++) {
		char key[16], r[24];
		const cJSON *t = jget(probe, RK_TOKENS);
		cJSON *m = cJSON_GetObjectItemCaseSensitive(res, (snprintf(key, sizeof(key), "mod%d", moduli[i]), key));
		cJSON *row;

		if (!cJSON_IsNumber(t))
			return;
		if (!m)
			m = json_add_obj(jb, res, key);
		snprintf(r, sizeof(r), "%ld", (long)t->valuedouble % moduli[i]);
		if (!m || !(row = cJSON_GetObjectItemCaseSensitive(m, r)))
			row = json_add_obj(jb, m, r);
		if (!row)
			return;
		bump(jb, row, SK_ATTEMPTS, 1);
		bump(jb, row, SK_PASSED, pass);
		bump(jb, row, SK_NEEDLES, total);
		bump(jb, row, SK_FOUND, found);
	}
}

/* One cache step: case, verdict, cached_tokens, ttft_ms and the needles it
 * got wrong ("Project: expected X, got Y"). */
static void take_cache(struct json_build *jb, cJSON *steps, const cJSON *rec,
		       const cJSON *probe)
{
	cJSON *o = json_add_obj(jb, steps, NULL), *wrong;
	const cJSON *n;

	if (!o)
		return;
	json_add_dup(jb, o, RK_CASE, jget(rec, RK_CASE));
	json_add_dup(jb, o, RK_VERDICT, jget(rec, RK_VERDICT));
	json_add_dup(jb, o, RK_CACHED_TOKENS, jget(probe, RK_CACHED_TOKENS));
	json_add_dup(jb, o, RK_TTFT_MS, jget(probe, RK_TTFT_MS));
	wrong = json_add_arr(jb, o, SK_WRONG);
	cJSON_ArrayForEach(n, jget2(rec, RK_GRADE, RK_NEEDLES)) {
		char line[256], tmp[2][64];
		if (cJSON_IsTrue(jget(n, RK_OK)))
			continue;
		snprintf(line, sizeof(line), "%s: expected %s, got %s",
			 md_value(jget(n, RK_PROJECT), tmp[0], sizeof(tmp[0])),
			 md_value(jget(n, RK_EXPECTED), tmp[1], sizeof(tmp[1])),
			 cJSON_IsString(jget(n, RK_GOT)) ? jget(n, RK_GOT)->valuestring : "nothing");
		json_add_str(jb, wrong, NULL, line);
	}
}

void probesum_init(struct probesum *p)
{
	json_build_init(&p->jb);
	p->s = NULL;
}

void probesum_release(struct probesum *p)
{
	cJSON_Delete(p->s);
	p->s = NULL;
}

void probesum_take(struct probesum *p, const struct record_view *v)
{
	const cJSON *pr = v->f[RF_PROBE], *rec = v->rec;

	if (!cJSON_IsObject(pr) || p->jb.code)
		return;
	if (!p->s) {
		p->s = json_new_obj(&p->jb);
		json_add_obj(&p->jb, p->s, SK_RESIDUE);
		json_add_arr(&p->jb, p->s, SK_CACHE);
	}
	if (jget(pr, RK_STEP))
		take_cache(&p->jb, cJSON_GetObjectItemCaseSensitive(p->s, SK_CACHE), rec, pr);
	else
		take_residue(&p->jb, cJSON_GetObjectItemCaseSensitive(p->s, SK_RESIDUE), rec, pr);
}

enum err probesum_end(struct probesum *p, cJSON **out, struct diag *d)
{
	enum err e;

	*out = NULL;
	if (!p->s && !p->jb.code)
		return ERR_OK;
	e = json_build_end(&p->jb, &p->s, "the probe summary", d);
	*out = p->s;
	p->s = NULL;
	return e;
}

static enum err residue_md(const cJSON *res, struct buf *b)
{
	const cJSON *m, *row;
	enum err e = buf_puts(b, "\n## Recall by length residue\n\n"
			      "Jitter steps by prompt tokens mod 2, 4 and 8: a residue that fails "
			      "while the others pass is a length-dependent serving bug.\n\n"
			      "| modulus | residue | attempts passed | needles found |\n|---|---|---|---|\n");

	cJSON_ArrayForEach(m, res)
		cJSON_ArrayForEach(row, m) {
			char t[4][32];
			if (!e)
				e = buf_printf(b, "| %s | %s | %s/%s | %s/%s |\n", m->string + 3, row->string,
					       md_number(jget(row, SK_PASSED), "%.0f", t[0], 32),
					       md_number(jget(row, SK_ATTEMPTS), "%.0f", t[1], 32),
					       md_number(jget(row, SK_FOUND), "%.0f", t[2], 32),
					       md_number(jget(row, SK_NEEDLES), "%.0f", t[3], 32));
		}
	return e;
}

static enum err cache_md(const cJSON *steps, struct buf *b)
{
	const cJSON *st, *w;
	int absent = 0;
	enum err e = buf_puts(b, "\n## Prefix-cache consistency\n\n"
			      "| step | verdict | cached_tokens | TTFT ms | wrong needles |\n|---|---|---|---|---|\n");

	cJSON_ArrayForEach(st, steps) {
		char t[3][64];
		absent |= !cJSON_IsNumber(jget(st, RK_CACHED_TOKENS));
		e = e ? e : buf_puts(b, "| ");
		e = e ? e : md_cell(b, md_value(jget(st, RK_CASE), t[0], 64));
		e = e ? e : buf_printf(b, " | %s | %s | %s | ", md_value(jget(st, RK_VERDICT), t[1], 64),
				       md_number(jget(st, RK_CACHED_TOKENS), "%.0f", t[2], 64),
				       md_number(jget(st, RK_TTFT_MS), "%.0f", t[0], 64));
		cJSON_ArrayForEach(w, jget(st, SK_WRONG))
			e = e ? e : buf_printf(b, "%s%s", w == jget(st, SK_WRONG)->child ? "" : "; ",
					       w->valuestring);
		e = e ? e : buf_puts(b, " |\n");
	}
	if (!e && absent)
		e = buf_puts(b, "\nThe server did not report usage.prompt_tokens_details.cached_tokens: "
			     "vLLM reports it with --enable-prompt-tokens-details, SGLang with "
			     "--enable-cache-report.\n");
	return e;
}

enum err probesum_markdown(const cJSON *summary, struct buf *out)
{
	const cJSON *p = jget(summary, SK_PROBES);
	enum err e = ERR_OK;

	if (!cJSON_IsObject(p))
		return ERR_OK;
	if (jget(p, SK_RESIDUE) && jget(p, SK_RESIDUE)->child)
		e = residue_md(jget(p, SK_RESIDUE), out);
	if (!e && cJSON_GetArraySize(jget(p, SK_CACHE)) > 0)
		e = cache_md(jget(p, SK_CACHE), out);
	return e;
}

int probesum_residue_arg(const char *arg, int *m, int *r)
{
	int n = 0;

	if (sscanf(arg, "%d:%d%n", m, r, &n) != 2 || arg[n] || *r < 0 || *r >= *m)
		return 0;
	return *m == 2 || *m == 4 || *m == 8;
}

int probesum_residue(const cJSON *summary, const char *arg, double *v)
{
	char key[16], r[24];
	int m, res;
	const cJSON *row;

	if (!probesum_residue_arg(arg, &m, &res))
		return 0;
	snprintf(key, sizeof(key), "mod%d", m);
	snprintf(r, sizeof(r), "%d", res);
	row = jget(jget(jget2(summary, SK_PROBES, SK_RESIDUE), key), r);
	if (!cJSON_IsObject(row) || !(jget_num(row, SK_NEEDLES) > 0))
		return 0;
	*v = jget_num(row, SK_FOUND) / jget_num(row, SK_NEEDLES);
	return 1;
}
