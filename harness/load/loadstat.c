/*
 * loadstat — load-test figures; see loadstat.h for the definitions.
 */
#include "loadstat.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"

/* The nearest-rank P-th percentile of v[0..n), which it sorts (stats.h). */
static double pct(double *v, size_t n, double p)
{
	stats_sort(v, n);
	return stats_nearest_rank(v, n, p);
}

static int has_tpot(const struct loadstat_req *q)
{
	return q->ok && q->completion_tokens >= 2 && q->first >= 0 && q->last >= q->first;
}

static double tpot_ms(const struct loadstat_req *q)
{
	return (q->last - q->first) / (double)(q->completion_tokens - 1);
}

int loadstat_meets(const struct loadstat_req *q, const struct loadstat_slo *slo)
{
	if (!q->ok || q->first < 0)
		return 0;
	if (!slo)
		return 1;
	if (slo->ttft_ms > 0 && q->first - q->sent > slo->ttft_ms)
		return 0;
	if (slo->tpot_ms > 0 && has_tpot(q) && tpot_ms(q) > slo->tpot_ms)
		return 0;
	if (slo->e2e_ms > 0 && q->done - q->sent > slo->e2e_ms)
		return 0;
	return 1;
}

int loadstat_sample(const struct loadstat_req *q, enum loadstat_kind k, double *v)
{
	switch (k) {
	case LOADSTAT_LAG:
		*v = q->sent - q->scheduled;
		return 1;
	case LOADSTAT_TPOT:
		*v = has_tpot(q) ? tpot_ms(q) : 0;
		return has_tpot(q);
	case LOADSTAT_TTFT:
		*v = q->first - q->sent;
		return q->ok && q->first >= 0;
	case LOADSTAT_TTFC:
		*v = q->first_content - q->sent;
		return q->ok && q->first_content >= 0;
	case LOADSTAT_E2E:
		*v = q->done - q->sent;
		return q->ok;
	}
	return 0;
}

/* Fills `v` with one sample kind of the round; returns how many. */
static size_t samples(const struct loadstat_req *q, size_t n, enum loadstat_kind k, double *v)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++)
		m += (size_t)loadstat_sample(&q[i], k, &v[m]);
	return m;
}

/* Wall time, output tokens, success and SLO counts, achieved rate. */
static void round_totals(const struct loadstat_req *q, size_t n,
			 const struct loadstat_slo *slo, struct loadstat_round *out)
{
	double t0 = q[0].scheduled, t1 = q[0].done, s0 = q[0].sent, s1 = q[0].sent;
	size_t i, met = 0;

	for (i = 0; i < n; i++) {
		t0 = q[i].scheduled < t0 ? q[i].scheduled : t0;
		t1 = q[i].done > t1 ? q[i].done : t1;
		s0 = q[i].sent < s0 ? q[i].sent : s0;
		s1 = q[i].sent > s1 ? q[i].sent : s1;
		if (q[i].ok) {
			out->succeeded++;
			out->output_tokens += q[i].completion_tokens;
		}
		met += (size_t)loadstat_meets(&q[i], slo);
	}
	out->wall_ms = t1 - t0;
	out->valid = out->succeeded == n;
	if (out->wall_ms > 0) {
		out->output_tps = (double)out->output_tokens * 1000.0 / out->wall_ms;
		out->goodput_rps = (double)met * 1000.0 / out->wall_ms;
	}
	out->slo_attainment = (double)met / (double)n;
	if (n >= 2 && s1 > s0)
		out->achieved_rate = (double)(n - 1) * 1000.0 / (s1 - s0);
}

void loadstat_round(const struct loadstat_req *q, size_t n,
		    const struct loadstat_slo *slo, double *scratch,
		    struct loadstat_round *out)
{
	size_t m;

	memset(out, 0, sizeof(*out));
	out->requests = n;
	if (!n)
		return;
	round_totals(q, n, slo, out);
	m = out->n_latency = samples(q, n, LOADSTAT_TTFT, scratch);
	out->ttft_p50_ms = pct(scratch, m, 50);
	out->ttft_p95_ms = pct(scratch, m, 95);
	out->ttft_p99_ms = pct(scratch, m, 99);
	m = out->n_ttfc = samples(q, n, LOADSTAT_TTFC, scratch);
	out->ttfc_p50_ms = pct(scratch, m, 50);
	out->ttfc_p95_ms = pct(scratch, m, 95);
	m = out->n_tpot = samples(q, n, LOADSTAT_TPOT, scratch);
	out->tpot_p50_ms = pct(scratch, m, 50);
	out->tpot_p95_ms = pct(scratch, m, 95);
	m = samples(q, n, LOADSTAT_E2E, scratch);
	out->e2e_p50_ms = pct(scratch, m, 50);
	out->e2e_p95_ms = pct(scratch, m, 95);
	m = samples(q, n, LOADSTAT_LAG, scratch);
	out->lag_p50_ms = pct(scratch, m, 50);
	out->lag_p99_ms = pct(scratch, m, 99);
	out->lag_max_ms = pct(scratch, m, 100);
}

void loadstat_round_itl(struct loadstat_round *r, double *gaps, size_t n)
{
	r->n_itl = n;
	r->itl_p50_ms = pct(gaps, n, 50);
	r->itl_p95_ms = pct(gaps, n, 95);
	r->itl_p99_ms = pct(gaps, n, 99);
}

/* The figure at byte `off` of each round, over valid rounds only or all,
 * and only those with inter-token latencies when `itl`. */
static void figure(const struct loadstat_round *r, size_t n, size_t off,
		   int valid_only, int itl, double *v, struct loadstat_fig *out)
{
	size_t i, m = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++)
		if ((r[i].valid || !valid_only) && (!itl || r[i].n_itl))
			memcpy(&v[m++], (const char *)&r[i] + off, sizeof(double));
	if (!m)
		return;
	out->n = m;
	out->median = pct(v, m, 50);
	out->min = v[0];
	out->max = v[m - 1];
}

#define FIG(field, valid_only) \
	figure(r, n, offsetof(struct loadstat_round, field), valid_only, 0, scratch, &out->field)
#define ITL(field) \
	figure(r, n, offsetof(struct loadstat_round, field), 1, 1, scratch, &out->field)

void loadstat_cell(const struct loadstat_round *r, size_t n, double *scratch,
		   struct loadstat_cell *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->rounds_total = n;
	for (i = 0; i < n; i++) {
		out->rounds_valid += (size_t)r[i].valid;
		out->requests += r[i].requests;
		out->succeeded += r[i].succeeded;
		out->lag_max_ms = r[i].lag_max_ms > out->lag_max_ms ? r[i].lag_max_ms
								    : out->lag_max_ms;
	}
	if (out->requests)
		out->success_rate = (double)out->succeeded / (double)out->requests;
	FIG(output_tps, 1);
	FIG(ttft_p50_ms, 1);
	FIG(ttft_p95_ms, 1);
	FIG(ttft_p99_ms, 1);
	FIG(ttfc_p50_ms, 1);
	FIG(ttfc_p95_ms, 1);
	FIG(tpot_p50_ms, 1);
	FIG(tpot_p95_ms, 1);
	FIG(e2e_p50_ms, 1);
	FIG(e2e_p95_ms, 1);
	FIG(achieved_rate, 1);
	FIG(lag_p99_ms, 1);
	FIG(slo_attainment, 0);
	FIG(goodput_rps, 0);
	ITL(itl_p50_ms);
	ITL(itl_p95_ms);
	ITL(itl_p99_ms);
}
