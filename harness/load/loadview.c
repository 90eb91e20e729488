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
#include "net/metrics.h"

#define LOADVIEW_FILE_MAX ((size_t)1 << 20) /* a level's view file, bytes */

/* Whether manifest round `m` belongs to cell `c`: same case and level. */
static int same_level(const cJSON *m, const cJSON *c)
{
	const cJSON *a = jget(m, LC_CASE), *b = jget(c, LC_CASE);
	const cJSON *ra = jget(m, LC_RATE), *rb = jget(c, LC_RATE);

	if (!cJSON_IsString(a) || !cJSON_IsString(b) || strcmp(a->valuestring, b->valuestring))
		return 0;
	if (cJSON_IsNumber(rb))
		return cJSON_IsNumber(ra) && ra->valuedouble == rb->valuedouble;
	return !ra && jget_num(m, LC_CONCURRENCY) == jget_num(c, LC_CONCURRENCY);
}

/* "client_cpu_share" and "client_cpu_share_max" over the cell's counted
 * rounds in the manifest's "load_client". */
static void add_client(struct json_build *jb, cJSON *cell, const cJSON *rounds)
{
	const cJSON *m;
	double cpu = 0, wall = 0, most = 0;
	int n = 0;

	cJSON_ArrayForEach(m, rounds) {
		double w = jget_num(m, LC_WALL_MS), u = jget_num(m, LC_CPU_MS);
		if (jget_num(m, LC_ROUND) < 1 || !same_level(m, cell) || !(w > 0))
			continue;
		cpu += u, wall += w, n++;
		most = u / w > most ? u / w : most;
	}
	if (!n)
		return;
	json_add_num(jb, cell, LC_CLIENT_CPU_SHARE, cpu / wall);
	json_add_num(jb, cell, LC_CLIENT_CPU_SHARE_MAX, most);
}

/* "server": the level's view file as run wrote it, or why there is none.
 * ERR_NOMEM only (then `d` says so). */
static enum err add_server(struct json_build *jb, cJSON *cell, const char *dir, struct diag *d)
{
	const cJSON *id = jget(cell, LC_CASE), *rate = jget(cell, LC_RATE);
	char name[512], path[4096];
	struct buf text;
	struct diag fd;
	cJSON *v = NULL, *o;

	if (!cJSON_IsString(id))
		return ERR_OK;
	metrics_file_name(id->valuestring, cJSON_IsNumber(rate),
			  cJSON_IsNumber(rate) ? rate->valuedouble : jget_num(cell, LC_CONCURRENCY),
			  ".json", name, sizeof(name));
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
	if (v && cJSON_IsObject(jget(v, "server"))) {
		json_add_dup(jb, cell, LC_SERVER, jget(v, "server"));
	} else {
		o = json_add_obj(jb, cell, LC_SERVER);
		json_add_str(jb, o, MV_ERROR, v && cJSON_IsString(jget(v, MV_ERROR))
			     ? jget(v, MV_ERROR)->valuestring : fd.code ? fd.msg : "no server view");
	}
	cJSON_Delete(v);
	return ERR_OK;
}

/* The cell's warnings (loadview.h) appended to `warn`. */
static void add_warnings(struct json_build *jb, cJSON *warn, const cJSON *cell)
{
	const cJSON *r;
	double cpu = jget_num(cell, LC_CLIENT_CPU_SHARE_MAX), lag = 0;
	char name[300], text[1024];

	loadcells_name(cell, name, sizeof(name));
	if (cpu > LOADVIEW_CPU_WARN) {
		snprintf(text, sizeof(text),
			 "%s: needle used %.2f of a CPU core in its busiest round (over %.2f): "
			 "output throughput and TTFT may be limited by the client, not the server",
			 name, cpu, LOADVIEW_CPU_WARN);
		json_add_str(jb, warn, NULL, text);
	}
	cJSON_ArrayForEach(r, jget(cell, LC_ROUNDS))
		lag = jget_num(r, LC_LAG_P99_MS) > lag ? jget_num(r, LC_LAG_P99_MS) : lag;
	if (lag > LOADVIEW_LAG_WARN_MS) {
		snprintf(text, sizeof(text),
			 "%s: requests were sent late, scheduling lag P99 %.1f ms in its worst round (over %.0f ms): "
			 "the server did not get the planned arrivals, so achieved rate, TTFT and SLO attainment "
			 "describe a gentler load than asked for",
			 name, lag, LOADVIEW_LAG_WARN_MS);
		json_add_str(jb, warn, NULL, text);
	}
}

enum err loadview_attach(cJSON *load, const cJSON *manifest, const char *dir,
			 struct diag *d)
{
	const cJSON *rounds = jget(manifest, LC_LOAD_CLIENT);
	struct json_build jb;
	cJSON *cell, *warn;
	enum err e;

	json_build_init(&jb);
	cJSON_ArrayForEach(cell, jget(load, LC_CELLS)) {
		add_client(&jb, cell, rounds);
		if ((e = add_server(&jb, cell, dir, d)))
			return e;
	}
	if (cJSON_IsObject(jget(manifest, LC_CLIENT)))
		json_add_dup(&jb, load, LC_CLIENT, jget(manifest, LC_CLIENT));
	warn = json_add_arr(&jb, load, LC_WARNINGS);
	cJSON_ArrayForEach(cell, jget(load, LC_CELLS))
		add_warnings(&jb, warn, cell);
	return json_build_end(&jb, NULL, "the load cells", d);
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

static enum err server_row(struct buf *b, const cJSON *c)
{
	const cJSON *s = jget(c, LC_SERVER);
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
	return e ? e : buf_printf(b, " | %s / %s | %s | %s | %s / %s | %s / %s | %s / %s | %s | %s | %s | %s |\n",
			  num(s, MV_REQUESTS, 1, "%.0f", t[0], 32), num(c, LC_REQUESTS, 1, "%.0f", t[1], 32),
			  num(s, MV_PROMPT_TOKENS, 1, "%.0f", t[2], 32),
			  num(s, MV_GENERATION_TOKENS, 1, "%.0f", t[3], 32),
			  num(s, MV_TTFT_P50_S, 1000, "%.0f", t[4], 32), num(c, LC_TTFT_P50_MS, 1, "%.0f", t[5], 32),
			  num(s, MV_TTFT_P95_S, 1000, "%.0f", t[6], 32), num(c, LC_TTFT_P95_MS, 1, "%.0f", t[7], 32),
			  num(s, MV_ITL_P95_S, 1000, "%.1f", t[8], 32), num(c, LC_ITL_P95_MS, 1, "%.1f", t[9], 32),
			  num(s, MV_RUNNING, 1, "%.0f", t[10], 32), num(s, MV_WAITING, 1, "%.0f", t[11], 32),
			  num(s, MV_KV_USAGE, 100, "%.1f%%", t[12], 32),
			  num(s, MV_PREFIX_HITS, 1, "%.0f", t[13], 32));
}

static enum err server_table(struct buf *b, const cJSON *load)
{
	const cJSON *c;
	enum err e;

	cJSON_ArrayForEach(c, jget(load, LC_CELLS))
		if (jget(c, LC_SERVER))
			break;
	if (!c)
		return ERR_OK;
	e = buf_puts(b, "\n### Server view (--metrics)\n\nThe server's own figures for each level's counted rounds "
		     "(its /metrics before and after; TTFT and inter-token latency interpolated in its "
		     "histogram buckets), beside needle's.\n\n"
		     "| cell | requests server / needle | prompt tokens | generation tokens "
		     "| TTFT P50 ms server / needle | TTFT P95 ms server / needle | ITL P95 ms server / needle "
		     "| running after | waiting after | KV cache usage | prefix-cache hit tokens |\n"
		     "|---|---|---|---|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(c, jget(load, LC_CELLS))
		if (!e && jget(c, LC_SERVER))
			e = server_row(b, c);
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
static enum err spec_table(struct buf *b, const cJSON *load)
{
	const cJSON *c, *s;
	char name[300], t[4][32], pos[256];
	enum err e;

	cJSON_ArrayForEach(c, jget(load, LC_CELLS))
		if (cJSON_IsNumber(jget2(c, LC_SERVER, MV_SPEC_ACCEPT_RATE)))
			break;
	if (!c)
		return ERR_OK;
	e = buf_puts(b, "\n### Speculative decoding (--metrics)\n\nThe server's draft acceptance over each level's "
		     "counted rounds: accepted over drafted tokens, the tokens one verification step yields "
		     "(the bonus token included), and the share of drafts accepted at each position.\n\n"
		     "| cell | acceptance | tokens per step | drafts | accepted by position |\n|---|---|---|---|---|\n");
	cJSON_ArrayForEach(c, jget(load, LC_CELLS)) {
		if (e || !cJSON_IsNumber(jget(s = jget(c, LC_SERVER), MV_SPEC_ACCEPT_RATE)))
			continue;
		loadcells_name(c, name, sizeof(name));
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

static enum err client_lines(struct buf *b, const cJSON *load)
{
	const cJSON *cl = jget(load, LC_CLIENT), *w;
	enum err e = ERR_OK;

	if (cJSON_IsObject(cl))
		e = buf_printf(b, "\nClient: needle used %.2f s of CPU in %.2f s (%.3f of a core) over the whole run.\n",
			       jget_num(cl, LC_CPU_MS) / 1000, jget_num(cl, LC_WALL_MS) / 1000,
			       jget_num(cl, LC_CPU_SHARE));
	cJSON_ArrayForEach(w, jget(load, LC_WARNINGS))
		if (!e && cJSON_IsString(w) && !(e = buf_puts(b, "\n**Warning:** ")) &&
		    !(e = md_cell(b, w->valuestring)))
			e = buf_puts(b, "\n");
	return e;
}

enum err loadview_markdown(const cJSON *summary, struct buf *out)
{
	const cJSON *load = jget(summary, LC_LOAD);
	enum err e;

	if (!load)
		return ERR_OK;
	e = server_table(out, load);
	if (!e)
		e = spec_table(out, load);
	return e ? e : client_lines(out, load);
}
