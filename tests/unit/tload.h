/* The counted load requests of hand-made records (a cJSON array), read as
 * the journal's reader reads them (run/record.h, record_load_request), for
 * tests of what is built from them (loadcells.h). */
#ifndef NEEDLE_TEST_TLOAD_H
#define NEEDLE_TEST_TLOAD_H

#include "load/loadcells.h"
#include "run/record.h"
#include "t.h"

static inline void tload_reqs(const cJSON *records, struct loadcells_reqs *out)
{
	struct loadcells_req q;
	struct record_view v;
	const cJSON *rec;

	memset(out, 0, sizeof(*out));
	cJSON_ArrayForEach(rec, records) {
		record_view_of(rec, &v);
		if (record_load_request(&v, &q))
			CHECK(loadcells_reqs_add(out, &q, NULL) == ERR_OK);
	}
}

#endif
