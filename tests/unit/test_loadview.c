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
#include "load/loadview.h"
#include "report/report.h"
#include "t.h"

static const char cells[] = "{\"cells\": ["
	"{\"case\": \"m\", \"concurrency\": 32, \"requests\": 8, \"rounds\": [{\"lag_p99_ms\": 0}]},"
	"{\"case\": \"m\", \"concurrency\": 1, \"requests\": 2, \"rounds\": [{\"lag_p99_ms\": 0}]},"
	"{\"case\": \"r\", \"rate\": 0.5, \"requests\": 4, \"ttft_p50_ms\": 100,"
	" \"rounds\": [{\"lag_p99_ms\": 2}, {\"lag_p99_ms\": 25}]}]}";

/* c32: rounds at 0.3 and 0.8 of a core (the warm-up at 3.0 is left out);
 * c1: 0.1; r0.5: no rounds in the manifest. */
static const char manifest[] = "{\"client\": {\"cpu_ms\": 10, \"wall_ms\": 100, \"cpu_share\": 0.1},"
	"\"load_client\": ["
	"{\"case\": \"m\", \"concurrency\": 32, \"level\": 1, \"round\": 0, \"cpu_ms\": 300, \"wall_ms\": 100},"
	"{\"case\": \"m\", \"concurrency\": 32, \"level\": 1, \"round\": 1, \"cpu_ms\": 30, \"wall_ms\": 100},"
	"{\"case\": \"m\", \"concurrency\": 32, \"level\": 1, \"round\": 2, \"cpu_ms\": 80, \"wall_ms\": 100},"
	"{\"case\": \"m\", \"concurrency\": 1, \"level\": 0, \"round\": 1, \"cpu_ms\": 10, \"wall_ms\": 100}]}";

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
	const cJSON *w;
	cJSON *load = cJSON_Parse(cells), *m = cJSON_Parse(manifest), *c32, *c1, *r, *doc;
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
	CHECK(loadview_attach(load, m, dir, &d) == ERR_OK);
	c32 = cJSON_GetArrayItem(jget(load, "cells"), 0);
	c1 = cJSON_GetArrayItem(jget(load, "cells"), 1);
	r = cJSON_GetArrayItem(jget(load, "cells"), 2);
	CHECK(jget_num(c32, "client_cpu_share") > 0.549 && jget_num(c32, "client_cpu_share") < 0.551);
	CHECK(jget_num(c32, "client_cpu_share_max") > 0.799 && jget_num(c32, "client_cpu_share_max") < 0.801);
	CHECK(jget_num(c1, "client_cpu_share") > 0.099 && jget_num(c1, "client_cpu_share") < 0.101);
	CHECK(!jget(r, "client_cpu_share"));
	CHECK(jget_num(jget(c32, "server"), "requests") == 8);
	CHECK(!jget(c1, "server"));                        /* no file: no --metrics */
	CHECK(cJSON_IsString(jget(jget(r, "server"), "error"))); /* a broken file is named */
	CHECK(jget_num(jget(load, "client"), "cpu_share") == 0.1);
	w = jget(load, "warnings");
	CHECK(cJSON_GetArraySize(w) == 2);
	CHECK(strstr(cJSON_GetArrayItem(w, 0)->valuestring, "m/c32: needle used 0.80 of a CPU core") &&
	      strstr(cJSON_GetArrayItem(w, 0)->valuestring, "throughput and TTFT may be limited by the client"));
	CHECK(strstr(cJSON_GetArrayItem(w, 1)->valuestring, "r/r0.5: requests were sent late, scheduling lag P99 25.0 ms"));
	doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "load", load);
	buf_init(&md, 1 << 20);
	CHECK(loadview_markdown(doc, &md) == ERR_OK);
	CHECK(md.data && strstr(md.data, "| m/c32 | 8 / 8 | - | - | 250 / - |"));
	CHECK(md.data && strstr(md.data, "| 50.0% | - |"));
	CHECK(md.data && strstr(md.data, "| r/r0.5 | no server view: "));
	CHECK(md.data && strstr(md.data, "(0.100 of a core)"));
	CHECK(md.data && strstr(md.data, "**Warning:** m/c32"));
	buf_release(&md);
	cJSON_Delete(doc);
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
	cJSON *load = cJSON_Parse(cells), *doc = cJSON_CreateObject();
	struct buf md;
	struct diag d;

	diag_init(&d);
	CHECK(loadview_attach(load, NULL, "/nonexistent", &d) == ERR_OK);
	CHECK(cJSON_GetArraySize(jget(load, "warnings")) == 1); /* the lag of r0.5 */
	CHECK(!jget(load, "client"));
	cJSON_AddItemToObject(doc, "load", load);
	buf_init(&md, 1 << 20);
	CHECK(loadview_markdown(doc, &md) == ERR_OK);
	CHECK(md.data && !strstr(md.data, "Server view") && !strstr(md.data, "Client:"));
	buf_release(&md);
	cJSON_Delete(doc);
}

/* The end-of-run lines repeat each warning. */
static void test_terminal(void)
{
	struct report_sum m;
	struct buf out;
	struct diag d;

	m.s = cJSON_Parse("{\"cases\": [], \"load\": {\"warnings\": [\"m/c32: needle used 0.80\"]}}");
	casetab_init(&m.cases);
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
