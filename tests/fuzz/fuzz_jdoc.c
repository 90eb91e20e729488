/*
 * fuzz_jdoc — json_parse's one-pass reader (harness/base/jdoc.h) against
 * cJSON on arbitrary bytes.
 *
 * Besides memory errors, it checks jdoc's contract: whatever it reads, cJSON
 * reads into the same tree (types, valueint, valuedouble bit for bit,
 * strings, keys, sibling links); whatever it leaves to cJSON (ERR_UNSUPPORTED)
 * is cJSON's to read or refuse. A difference aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "tests/unit/jsame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *mine = NULL, *ref = cJSON_ParseWithLength((const char *)data, size);
	enum err e = jdoc_parse((const char *)data, size, &mine);

	if (e != ERR_UNSUPPORTED && e != ERR_NOMEM && (e || !ref || !same_tree(mine, ref)))
		abort();
	cJSON_Delete(mine);
	cJSON_Delete(ref);
	return 0;
}
