/* Placeholder until the needle-document generator lands. */
#include "haystack.h"

#include <string.h>

enum err haystack_build(const struct haystack_opts *o, struct haystack *out,
			struct diag *d)
{
	(void)o;
	memset(out, 0, sizeof(*out));
	return diag_fail(d, ERR_UNSUPPORTED, "needle documents are not implemented yet");
}

void haystack_release(struct haystack *h)
{
	if (h)
		memset(h, 0, sizeof(*h));
}
