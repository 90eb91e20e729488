/*
 * fuzz_suite — the suite parser (harness/run/suite.h) on arbitrary suite text
 * through its from-memory entry, suite_parse. A suite that parses must find
 * each of its cases by id.
 */
#include <stdint.h>
#include <stdlib.h>

#include "run/suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct suite *s = NULL;
	struct diag d;

	diag_init(&d);
	if (!suite_parse("fuzz.json", (const char *)data, size, &s, &d)) {
		if (!s)
			abort();
		size_t i;

		for (i = 0; i < s->ncases; i++)
			if (!s->cases[i].id || suite_find(s, s->cases[i].id) != &s->cases[i])
				abort();
		(void)suite_kind_name(s->ncases ? s->cases[0].kind : SUITE_CHAT);
	}
	suite_free(s);
	return 0;
}
