/*
 * loadview — the server's and the client's side of load cells; see
 * loadview.h.
 */
#include "loadview.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/io.h"
#include "base/jget.h"
#include "base/json.h"
#include "loadcells.h"
#include "base/md.h"
#include "base/mem.h"
#include "base/stats.h"
#include "net/metrics.h"

#define LOADVIEW_FILE_MAX ((size_t)1 << 20) /* a level's view file, bytes */

/* Whether manifest round `m` belongs to cell `c`: same case and level. */
static int same_level(const cJSON *m, const struct loadcells_cell *c)
{
	const cJSON *a = jget(m, LC_CASE), *ra = jget(m, LC_RATE);

	if (!cJSON_IsString(a) || strcmp(a->valuestring, c->case_id))
		return 0;
	if (c->open_loop)
		return cJSON_IsNumber(ra) && ra->valuedouble == c->level_value;
	return !ra && jget_num(m, LC_CONCURRENCY) == c->level_value;
}

/* The client's CPU share over the cell's counted rounds in the manifest's
 * "load_client", and the median of the machine's probes over the counted
 * rounds of the cell's case: its levels' rounds alternate in blocks, so they
 * met the same states of the machine, and three levels' rounds give a
 * steadier median than one's. ERR_NOMEM only. */
static enum err add_client(struct loadcells_cell *cell, const cJSON *rounds, struct diag *d)
{
	const cJSON *m;
	double cpu = 0, wall = 0, most = 0, *probe;
	int n = 0, k = 0;

	if (!(probe = mem_alloc(((size_t)cJSON_GetArraySize(rounds) + 1) * sizeof(*probe))))
		return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
	cJSON_ArrayForEach(m, rounds) {
		double w = jget_num(m, LC_WALL_MS), u = jget_num(m, LC_CPU_MS), p = jget_num(m, LC_PROBE_MS);
		const cJSON *c = jget(m, LC_CASE);
		if (jget_num(m, LC_ROUND) < 1 || !(w > 0))
			continue;
		if (isfinite(p) && p > 0 && cJSON_IsString(c) && !strcmp(c->valuestring, cell->case_id))
			probe[k++] = p;
		if (!same_level(m, cell))
			continue;
		cpu += u, wall += w, n++;
		most = u / w > most ? u / w : most;
	}
	if (n) {
		cell->has_client = 1;
		cell->client_cpu_share = cpu / wall;
		cell->client_cpu_share_max = most;
	}
	if (k) {
		stats_sort(probe, (size_t)k);
		cell->has_probe = 1;
		cell->client_probe_ms = stats_linear(probe, (size_t)k, 50);
	}
	mem_free(probe);
	return ERR_OK;
}

/* The server's view: the level's view file as run wrote it, or why there
 * is none. ERR_NOMEM only (then `d` says so). */
static enum err add_server(struct loadcells_cell *cell, const char *dir, struct diag *d)
{
	char name[512], path[4096];
	struct buf text;
	struct diag fd;
	struct json_build jb;
	cJSON *v = NULL;

	metrics_file_name(cell->case_id, cell->open_loop, cell->level_value, ".json", name, sizeof(name));
	snprintf(path, sizeof(path), "%s/raw/%s", dir, name);
	if (access(path, F_OK) != 0)
		return ERR_OK;
	buf_init(&text, LOADVIEW_FILE_MAX);
	diag_init(&fd);
	if (!io_read_file(path, &text, &fd))
		(void)json_parse(text.data, text.len, &v, name, &fd);
	buf_release(&text);
	if (fd.code == ERR_NOMEM)
		return diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	json_build_init(&jb);
	if (v && cJSON_IsObject(jget(v, "server"))) {
		cell->server = cJSON_DetachItemFromObjectCaseSensitive(v, "server");
	} else {
		cell->server = json_new_obj(&jb);
		json_add_str(&jb, cell->server, MV_ERROR, v && cJSON_IsString(jget(v, MV_ERROR))
			     ? jget(v, MV_ERROR)->valuestring : fd.code ? fd.msg : "no server view");
	}
	cJSON_Delete(v);
	return json_build_end(&jb, &cell->server, "the load cells", d);
}

/* Appends warning `text` to `lc`. */
static enum err warn(struct loadcells *lc, const char *text, struct diag *d)
{
	char **w = mem_realloc(lc->warnings, (lc->nwarnings + 1) * sizeof(*w));

	if (!w)
		return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
	lc->warnings = w;
	if (!(w[lc->nwarnings] = mem_strndup(text, strlen(text))))
		return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
	lc->nwarnings++;
	return ERR_OK;
}

/* The cell's warnings (loadview.h) appended to `lc`. */
static enum err add_warnings(struct loadcells *lc, const struct loadcells_cell *cell, struct diag *d)
{
	double cpu = cell->has_client ? cell->client_cpu_share_max : 0, lag = 0;
	char name[300], text[1024];
	size_t i;
	enum err e = ERR_OK;

	loadcells_name(cell, name, sizeof(name));
	if (cpu > LOADVIEW_CPU_WARN) {
		snprintf(text, sizeof(text),
			 "%s: needle used %.2f of a CPU core in its busiest round (over %.2f): "
			 "output throughput and TTFT may be limited by the client, not the server",
			 name, cpu, LOADVIEW_CPU_WARN);
		e = warn(lc, text, d);
	}
	for (i = 0; i < cell->nrounds; i++)
		lag = cell->rounds[i].s.lag_p99_ms > lag ? cell->rounds[i].s.lag_p99_ms : lag;
	if (!e && lag > LOADVIEW_LAG_WARN_MS) {
		snprintf(text, sizeof(text),
			 "%s: requests were sent late, scheduling lag P99 %.1f ms in its worst round (over %.0f ms): "
			 "the server did not get the planned arrivals, so achieved rate, TTFT and SLO attainment "
			 "describe a gentler load than asked for",
			 name, lag, LOADVIEW_LAG_WARN_MS);
		e = warn(lc, text, d);
	}
	return e;
}

enum err loadview_attach(struct loadcells *lc, const cJSON *manifest, const char *dir,
			 struct diag *d)
{
	const cJSON *rounds = jget(manifest, LC_LOAD_CLIENT);
	size_t i;
	enum err e;

	for (i = 0; i < lc->n; i++) {
		if ((e = add_client(&lc->c[i], rounds, d)) || (e = add_server(&lc->c[i], dir, d)))
			return e;
	}
	if (cJSON_IsObject(jget(manifest, LC_CLIENT)) &&
	    !(lc->client = cJSON_Duplicate(jget(manifest, LC_CLIENT), 1)))
		return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
	for (i = 0; i < lc->n; i++)
		if ((e = add_warnings(lc, &lc->c[i], d)))
			return e;
	return ERR_OK;
}

/* ---- Markdown ---- */

/* A view figure in `scale` units ("-" when absent or null). */
static const char *num(const cJSON *o, const char *k, double scale, const char *fmt,
		       char *tmp, size_t cap)
{
	const cJSON *v = jget(o, k);

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return "-";
	snprintf(tmp, cap, fmt, v->valuedouble * scale);
	return tmp;
}

/* A cell's figure `f` ("-" when it has none). */
static const char *fig(const struct loadcells_cell *c, enum loadcells_fig f, const char *fmt,
		       char *tmp, size_t cap)
{
	double v;

	if (!loadcells_median(c, f, &v) || !isfinite(v))
		return "-";
	snprintf(tmp, cap, fmt, v);
	return tmp;
}

static enum err server_row(struct buf *b, const struct loadcells_cell *c)
{
	const cJSON *s = c->server;
	char name[300], t[14][32];
	enum err e;

	loadcells_name(c, name, sizeof(name));
	e = buf_puts(b, "| ");
	if (!e)
		e = md_cell(b, name);
	if (!e && cJSON_IsString(jget(s, MV_ERROR))) {
		e = buf_puts(b, " | no server view: ");
		if (!e)
			e = md_cell(b, jget(s, MV_ERROR)->valuestring);
		return e ? e : buf_puts(b, " | | | | | | | | | |\n");
	}
	snprintf(t[1], sizeof(t[1]), "%zu", c->s.requests);
	return e ? e : buf_printf(b, " | %s / %s | %s | %s | %s / %s | %s / %s | %s / %s | %s | %s | %s | %s |\n",
			  num(s, MV_REQUESTS, 1, "%.0f", t[0], 32), t[1],
			  num(s, MV_PROMPT_TOKENS, 1, "%.0f", t[2], 32),
			  num(s, MV_GENERATION_TOKENS, 1, "%.0f", t[3], 32),
			  num(s, MV_TTFT_P50_S, 1000, "%.0f", t[4], 32), fig(c, LCF_TTFT_P50_MS, "%.0f", t[5], 32),
			  num(s, MV_TTFT_P95_S, 1000, "%.0f", t[6], 32), fig(c, LCF_TTFT_P95_MS, "%.0f", t[7], 32),
			  num(s, MV_ITL_P95_S, 1000, "%.1f", t[8], 32), fig(c, LCF_ITL_P95_MS, "%.1f", t[9], 32),
			  num(s, MV_RUNNING, 1, "%.0f", t[10], 32), num(s, MV_WAITING, 1, "%.0f", t[11], 32),
			  num(s, MV_KV_USAGE, 100, "%.1f%%", t[12], 32),
			  num(s, MV_PREFIX_HITS, 1, "%.0f", t[13], 32));
}

static enum err server_table(struct buf *b, const struct loadcells *lc)
{
	size_t i;
	enum err e;

	for (i = 0; i < lc->n && !lc->c[i].server; i++)
		;
	if (i == lc->n)
		return ERR_OK;
	e = buf_puts(b, "\n### Server view (--metrics)\n\nThe server's own figures for each level's counted rounds "
		     "(its /metrics before and after; TTFT and inter-token latency interpolated in its "
		     "histogram buckets), beside needle's.\n\n"
		     "| cell | requests server / needle | prompt tokens | generation tokens "
		     "| TTFT P50 ms server / needle | TTFT P95 ms server / needle | ITL P95 ms server / needle "
		     "| running after | waiting after | KV cache usage | prefix-cache hit tokens |\n"
		     "|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (i = 0; !e && i < lc->n; i++)
		if (lc->c[i].server)
			e = server_row(b, &lc->c[i]);
	return e;
}

/* The share accepted at each draft position, "0.81, 0.62, 0.44"; "-"
 * without them. */
static const char *by_position(const cJSON *pos, char *out, size_t cap)
{
	const cJSON *p;
	size_t n = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(p, pos) {
		if (n + 16 >= cap)
			break;
		if (cJSON_IsNumber(p))
			n += (size_t)snprintf(out + n, cap - n, "%s%.2f", n ? ", " : "", p->valuedouble);
		else
			n += (size_t)snprintf(out + n, cap - n, "%s-", n ? ", " : "");
	}
	return n ? out : "-";
}

/* Speculative decoding, where the server exports it (metrics.h). */
static enum err spec_table(struct buf *b, const struct loadcells *lc)
{
	const cJSON *s;
	char name[300], t[4][32], pos[256];
	size_t i;
	enum err e;

	for (i = 0; i < lc->n && !cJSON_IsNumber(jget(lc->c[i].server, MV_SPEC_ACCEPT_RATE)); i++)
		;
	if (i == lc->n)
		return ERR_OK;
	e = buf_puts(b, "\n### Speculative decoding (--metrics)\n\nThe server's draft acceptance over each level's "
		     "counted rounds: accepted over drafted tokens, the tokens one verification step yields "
		     "(the bonus token included), and the share of drafts accepted at each position.\n\n"
		     "| cell | acceptance | tokens per step | drafts | accepted by position |\n|---|---|---|---|---|\n");
	for (i = 0; i < lc->n; i++) {
		if (e || !cJSON_IsNumber(jget(s = lc->c[i].server, MV_SPEC_ACCEPT_RATE)))
			continue;
		loadcells_name(&lc->c[i], name, sizeof(name));
		e = buf_puts(b, "| ");
		if (!e)
			e = md_cell(b, name);
		if (!e)
			e = buf_printf(b, " | %s | %s | %s | %s |\n", num(s, MV_SPEC_ACCEPT_RATE, 1, "%.3f", t[0], 32),
				       num(s, MV_SPEC_ACCEPT_LENGTH, 1, "%.2f", t[1], 32),
				       num(s, MV_SPEC_DRAFTS, 1, "%.0f", t[2], 32),
				       by_position(jget(s, MV_SPEC_ACCEPT_BY_POS), pos, sizeof(pos)));
	}
	return e;
}

static enum err client_lines(struct buf *b, const struct loadcells *lc)
{
	const cJSON *cl = lc->client;
	enum err e = ERR_OK;
	size_t i;

	if (cl)
		e = buf_printf(b, "\nClient: needle used %.2f s of CPU in %.2f s (%.3f of a core) over the whole run.\n",
			       jget_num(cl, LC_CPU_MS) / 1000, jget_num(cl, LC_WALL_MS) / 1000,
			       jget_num(cl, LC_CPU_SHARE));
	for (i = 0; !e && i < lc->nwarnings; i++)
		if (!(e = buf_puts(b, "\n**Warning:** ")) && !(e = md_cell(b, lc->warnings[i])))
			e = buf_puts(b, "\n");
	return e;
}

enum err loadview_markdown(const struct loadcells *lc, struct buf *out)
{
	enum err e;

	if (!lc->n)
		return ERR_OK;
	e = server_table(out, lc);
	if (!e)
		e = spec_table(out, lc);
	return e ? e : client_lines(out, lc);
}
