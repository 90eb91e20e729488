/*
 * Unit tests of loadview: the client's CPU share per cell from the
 * manifest's rounds (warm-up left out), the warnings and what they name, the
 * server's view read from raw/ (and a broken file named, not fatal), and the
 * Markdown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/jget.h"
#include "base/mem.h"
#include "load/loadview.h"
#include "report/report.h"
#include "t.h"

/* Three cells: m/c32 (8 requests), m/c1 (2), r/r0.5 (4, TTFT P50 100 ms,
 * a round whose scheduling lag P99 is 25 ms). */
static void make_cells(struct loadcells *lc)
{
	static const struct { const char *id; int open; double level; size_t requests, rounds;
			      double lag[2]; } in[] = {
		{"m", 0, 32, 8, 1, {0, 0}}, {"m", 0, 1, 2, 1, {0, 0}}, {"r", 1, 0.5, 4, 2, {2, 25}}};
	size_t i, k;

	memset(lc, 0, sizeof(*lc));
	lc->c = mem_calloc(3, sizeof(*lc->c));
	CHECK(lc->c != NULL);
	for (i = 0; lc->c && i < 3; i++) {
		struct loadcells_cell *c = &lc->c[i];
		c->case_id = mem_strndup(in[i].id, strlen(in[i].id));
		c->open_loop = in[i].open;
		c->level_value = in[i].level;
		c->s.requests = in[i].requests;
		c->rounds = mem_calloc(in[i].rounds, sizeof(*c->rounds));
		c->nrounds = in[i].rounds;
		for (k = 0; c->rounds && k < in[i].rounds; k++)
			c->rounds[k].s.lag_p99_ms = in[i].lag[k];
		lc->n++;
	}
	lc->c[2].s.ttft_p50_ms = (struct loadstat_fig){1, 100, 100, 100};
}

/* c32: rounds at 0.3 and 0.8 of a core (the warm-up at 3.0 is left out),
 * probes 0.7 and 0.9 ms (the warm-up's 5 left out); c1: 0.1, probe 1.0,
 * so that case m's probes have the median 0.9; r0.5: no rounds in the
 * manifest. */
static const char manifest[] = "{\"client\": {\"cpu_ms\": 10, \"wall_ms\": 100, \"cpu_share\": 0.1},"
	"\"load_client\": ["
	"{\"case\": \"m\", \"concurrency\": 32, \"level\": 1, \"round\": 0, \"cpu_ms\": 300, \"wall_ms\": 100, "
	"\"probe_ms\": 5},"
	"{\"case\": \"m\", \"concurrency\": 32, \"level\": 1, \"round\": 1, \"cpu_ms\": 30, \"wall_ms\": 100, "
	"\"probe_ms\": 0.7},"
	"{\"case\": \"m\", \"concurrency\": 32, \"level\": 1, \"round\": 2, \"cpu_ms\": 80, \"wall_ms\": 100, "
	"\"probe_ms\": 0.9},"
	"{\"case\": \"m\", \"concurrency\": 1, \"level\": 0, \"round\": 1, \"cpu_ms\": 10, \"wall_ms\": 100, "
	"\"probe_ms\": 1.0}]}";

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_attach(void)
{
	char dir[] = "/tmp/test_loadview.XXXXXX", path[256];
	cJSON *m = cJSON_Parse(manifest), *load = NULL;
	const struct loadcells_cell *c32, *c1, *r;
	struct loadcells lc;
	struct buf md;
	struct diag d;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/raw", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/raw/metrics-m-c32.json", dir);
	put_file(path, "{\"server\": {\"dialect\": \"vllm\", \"requests\": 8, \"ttft_p50_s\": 0.25, \"kv_usage\": 0.5}}");
	snprintf(path, sizeof(path), "%s/raw/metrics-r-r0.5.json", dir);
	put_file(path, "{\"server\": ");
	diag_init(&d);
	make_cells(&lc);
	CHECK(loadview_attach(&lc, m, dir, &d) == ERR_OK);
	c32 = &lc.c[0], c1 = &lc.c[1], r = &lc.c[2];
	CHECK(c32->has_client && c32->client_cpu_share > 0.549 && c32->client_cpu_share < 0.551);
	CHECK(c32->client_cpu_share_max > 0.799 && c32->client_cpu_share_max < 0.801);
	CHECK(c1->has_client && c1->client_cpu_share > 0.099 && c1->client_cpu_share < 0.101);
	CHECK(!r->has_client);
	CHECK(c32->has_probe && c32->client_probe_ms > 0.8999 && c32->client_probe_ms < 0.9001);
	CHECK(c1->has_probe && c1->client_probe_ms > 0.8999 && c1->client_probe_ms < 0.9001);
	CHECK(!r->has_probe);
	CHECK(jget_num(c32->server, "requests") == 8);
	CHECK(!c1->server);                                  /* no file: no --metrics */
	CHECK(cJSON_IsString(jget(r->server, "error")));     /* a broken file is named */
	CHECK(jget_num(lc.client, "cpu_share") == 0.1);
	CHECK(lc.nwarnings == 2);
	CHECK(lc.nwarnings == 2 && strstr(lc.warnings[0], "m/c32: needle used 0.80 of a CPU core") &&
	      strstr(lc.warnings[0], "throughput and TTFT may be limited by the client"));
	CHECK(lc.nwarnings == 2 && strstr(lc.warnings[1], "r/r0.5: requests were sent late, scheduling lag P99 25.0 ms"));
	/* the summary's "load" carries them, each cell's after its rounds */
	CHECK(loadcells_json(&lc, &load, &d) == ERR_OK);
	CHECK(jget_num(cJSON_GetArrayItem(jget(load, "cells"), 0), "client_cpu_share_max") > 0.799);
	CHECK(jget_num(cJSON_GetArrayItem(jget(load, "cells"), 0), "client_probe_ms") > 0.8999);
	CHECK(!jget(cJSON_GetArrayItem(jget(load, "cells"), 2), "client_probe_ms"));
	CHECK(jget_num(jget(cJSON_GetArrayItem(jget(load, "cells"), 0), "server"), "requests") == 8);
	CHECK(cJSON_GetArraySize(jget(load, "warnings")) == 2 && jget(load, "client"));
	buf_init(&md, 1 << 20);
	CHECK(loadview_markdown(&lc, &md) == ERR_OK);
	CHECK(md.data && strstr(md.data, "| m/c32 | 8 / 8 | - | - | 250 / - |"));
	CHECK(md.data && strstr(md.data, "| 50.0% | - |"));
	CHECK(md.data && strstr(md.data, "| r/r0.5 | no server view: "));
	CHECK(md.data && strstr(md.data, "(0.100 of a core)"));
	CHECK(md.data && strstr(md.data, "**Warning:** m/c32"));
	buf_release(&md);
	cJSON_Delete(load);
	loadcells_free(&lc);
	cJSON_Delete(m);
	unlink(path);
	snprintf(path, sizeof(path), "%s/raw/metrics-m-c32.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/raw", dir);
	rmdir(path);
	rmdir(dir);
}

/* Without a manifest or metrics: no client figures, no warnings, nothing
 * rendered but what there is. */
static void test_bare(void)
{
	struct loadcells lc;
	struct buf md;
	struct diag d;

	diag_init(&d);
	make_cells(&lc);
	CHECK(loadview_attach(&lc, NULL, "/nonexistent", &d) == ERR_OK);
	CHECK(lc.nwarnings == 1); /* the lag of r0.5 */
	CHECK(!lc.client);
	buf_init(&md, 1 << 20);
	CHECK(loadview_markdown(&lc, &md) == ERR_OK);
	CHECK(md.data && !strstr(md.data, "Server view") && !strstr(md.data, "Client:"));
	buf_release(&md);
	loadcells_free(&lc);
}

/* The end-of-run lines repeat each warning. */
static void test_terminal(void)
{
	struct report_sum m;
	struct buf out;
	struct diag d;

	m.s = cJSON_Parse("{\"cases\": []}");
	casetab_init(&m.cases);
	memset(&m.load, 0, sizeof(m.load));
	m.load.warnings = mem_calloc(1, sizeof(*m.load.warnings));
	CHECK(m.load.warnings != NULL);
	if (m.load.warnings)
		m.load.warnings[m.load.nwarnings++] = mem_strndup("m/c32: needle used 0.80", 23);
	buf_init(&out, 1 << 16);
	diag_init(&d);
	CHECK(m.s && report_terminal(&m, &out, &d) == ERR_OK);
	CHECK(out.data && !strcmp(out.data, "warning: m/c32: needle used 0.80\n"));
	buf_release(&out);
	report_sum_release(&m);
}

int main(void)
{
	T_RUN(test_attach);
	T_RUN(test_bare);
	T_RUN(test_terminal);
	return T_DONE();
}
