/*
 * fuzz_gate — `needle diff --gate` specs (harness/report/gate.h): the input
 * (NUL bytes cut it short, as argv would) as one --gate value. A spec that
 * parses gives 1 to 64 gates, each with a name and a finite threshold.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/gate.h"

#define CAP 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gate g[CAP];
	char spec[1024];
	size_t n = 0, i, len = size < sizeof(spec) - 1 ? size : sizeof(spec) - 1;
	struct diag d;

	memcpy(spec, data, len);
	spec[len] = '\0';
	diag_init(&d);
	if (!gate_expand(spec, g, CAP, &n, &d)) {
		if (n < 1 || n > CAP)
			abort();
		for (i = 0; i < n; i++)
			if (!g[i].name[0] || !isfinite(g[i].value))
				abort();
	}
	return 0;
}
