/*
 * curlapi — libcurl, loaded at the first HTTP request. See curlapi.h.
 */
#include "curlapi.h"

#include <dlfcn.h>
#include <stddef.h>

static struct curlapi api;
static int loaded;

/* Each table entry's libcurl name and place in struct curlapi. */
static const struct {
	const char *name;
	size_t off;
} syms[] = {
#define SYM(f) {"curl_" #f, offsetof(struct curlapi, f)}
	SYM(global_init),     SYM(easy_init),        SYM(easy_setopt),
	SYM(easy_getinfo),    SYM(easy_strerror),    SYM(easy_cleanup),
	SYM(slist_append),    SYM(slist_free_all),   SYM(multi_init),
	SYM(multi_add_handle), SYM(multi_remove_handle), SYM(multi_perform),
	SYM(multi_poll),      SYM(multi_info_read),  SYM(multi_strerror),
	SYM(multi_cleanup),
#undef SYM
};

enum err curlapi_get(const struct curlapi **out, struct diag *d)
{
	struct curlapi t;
	void *lib;
	size_t i;

	*out = NULL;
	if (loaded) {
		*out = &api;
		return ERR_OK;
	}
	/* never closed: the table points into it until the process ends */
	if (!(lib = dlopen(CURLAPI_SONAME, RTLD_NOW | RTLD_LOCAL)))
		return diag_fail(d, ERR_INTERNAL,
				 "cannot load libcurl: %s (Debian's package is libcurl4)", dlerror());
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(lib, syms[i].name);

		if (!f)
			return diag_fail(d, ERR_INTERNAL, "'%s' has no '%s': libcurl 7.66 or later needed",
					 CURLAPI_SONAME, syms[i].name);
		/* POSIX makes a function pointer and void * convertible for dlsym */
		*(void **)((char *)&t + syms[i].off) = f;
	}
	if (t.global_init(CURL_GLOBAL_DEFAULT))
		return diag_fail(d, ERR_INTERNAL, "cannot initialise libcurl");
	api = t;
	loaded = 1;
	*out = &api;
	return ERR_OK;
}
