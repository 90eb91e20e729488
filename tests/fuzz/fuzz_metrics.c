/*
 * fuzz_metrics — the Prometheus text parser (harness/net/metrics.h) on arbitrary
 * bytes.
 *
 * Besides memory errors, it checks the table's contract: keys are sorted and
 * unique, each key is canonical (parsing "KEY 1" gives back exactly KEY), a
 * delta of a snapshot with itself keeps every key, and the inspectors
 * (labels, quantiles, the server view) run on whatever was parsed. A broken
 * contract aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "net/metrics.h"

static void check_canonical(const struct metrics_sample *s)
{
	struct metrics again;
	struct buf line;
	struct diag d;

	buf_init(&line, (size_t)4 << 20);
	if (buf_printf(&line, "%s 1", s->key))
		abort();
	diag_init(&d);
	metrics_init(&again);
	if (metrics_parse(&again, line.data, line.len, &d) || again.n != 1 ||
	    strcmp(again.s[0].key, s->key))
		abort();
	metrics_release(&again);
	buf_release(&line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct metrics m, delta;
	struct metrics_view v;
	struct diag d;
	char le[32];
	size_t i;

	diag_init(&d);
	metrics_init(&m);
	metrics_init(&delta);
	if (!metrics_parse(&m, (const char *)data, size, &d)) {
		for (i = 0; i < m.n; i++) {
			if (i && strcmp(m.s[i - 1].key, m.s[i].key) >= 0)
				abort();
			if (i < 64)
				check_canonical(&m.s[i]);
			(void)metrics_label(&m.s[i], "le", le, sizeof(le));
			(void)metrics_type_of(&m, m.s[i].key, m.s[i].name_len);
		}
		if (metrics_delta(&m, &m, &delta, &d) || delta.n != m.n)
			abort();
		metrics_view(&delta, &m, &v);
		for (i = 0; i < m.nf && i < 16; i++)
			(void)metrics_quantile(&m, m.f[i].name, 0.95);
	}
	metrics_release(&delta);
	metrics_release(&m);
	return 0;
}
