/*
 * curlapi — libcurl, loaded at the first HTTP request rather than linked.
 *
 * Most of needle's commands (count, gen, report, diff, templates) never
 * touch the network, and linking libcurl makes every one of them map and
 * relocate its thirty-odd libraries (TLS, Kerberos, LDAP, HTTP/2, ...)
 * before main: about 3 ms of each `needle count`. So the binary carries
 * only libcurl's headers; curlapi_get() opens the runtime library the
 * build's libcurl4-openssl-dev names (libcurl.so.4) once, with every
 * function http.c calls, and hands out the same table from then on.
 * Not thread-safe on the first call (http.c calls it from the thread that
 * makes the client, before any transfer). Private to net/: only http.c
 * includes this header.
 */
#ifndef NEEDLE_CURLAPI_H
#define NEEDLE_CURLAPI_H

#include <curl/curl.h>

#include "base/err.h"

/* The library's file name, as the loader looks it up. */
#define CURLAPI_SONAME "libcurl.so.4"

/* The libcurl functions needle calls, by their names without `curl_`. */
struct curlapi {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *e, CURLoption opt, ...);
	CURLcode (*easy_getinfo)(CURL *e, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode rc);
	void (*easy_cleanup)(CURL *e);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *e);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *e);
	CURLMcode (*multi_perform)(CURLM *m, int *running);
	CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *fds, unsigned nfds,
				int timeout_ms, int *numfds);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	const char *(*multi_strerror)(CURLMcode rc);
	CURLMcode (*multi_cleanup)(CURLM *m);
};

/* Loads libcurl and runs curl_global_init the first time; *out is then a
 * table that lives as long as the process. ERR_INTERNAL with the loader's
 * reason if the library or one of the functions is missing. */
enum err curlapi_get(const struct curlapi **out, struct diag *d);

#endif
