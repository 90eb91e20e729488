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

#include "base/jdoc.h"

static int same_tree(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y, *px = NULL;

	if (a->type != b->type || a->valueint != b->valueint ||
	    memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) ||
	    !a->valuestring != !b->valuestring || !a->string != !b->string ||
	    (a->valuestring && strcmp(a->valuestring, b->valuestring)) ||
	    (a->string && strcmp(a->string, b->string)))
		return 0;
	for (x = a->child, y = b->child; x && y; px = x, x = x->next, y = y->next)
		if ((x != a->child && x->prev != px) || !same_tree(x, y))
			return 0;
	return !x && !y && (!a->child || (a->child->prev == px && b->child->prev &&
					  !b->child->prev->next));
}

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
