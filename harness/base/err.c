#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void diag_init(struct diag *d)
{
	d->code = ERR_OK;
	d->msg[0] = '\0';
}

enum err diag_fail(struct diag *d, enum err code, const char *fmt, ...)
{
	va_list ap;

	if (!d || d->code != ERR_OK)
		return code;
	d->code = code;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return code;
}

void diag_prefix(struct diag *d, const char *fmt, ...)
{
	char head[DIAG_MSG_MAX], both[2 * DIAG_MSG_MAX + 2];
	va_list ap;

	if (!d || d->code == ERR_OK)
		return;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	snprintf(both, sizeof(both), "%s: %s", head, d->msg);
	memcpy(d->msg, both, sizeof(d->msg) - 1);
	d->msg[sizeof(d->msg) - 1] = '\0';
}

const char *err_name(enum err code)
{
	switch (code) {
	case ERR_OK: return "ok";
	case ERR_USAGE: return "usage";
	case ERR_NOMEM: return "nomem";
	case ERR_LIMIT: return "limit";
	case ERR_IO: return "io";
	case ERR_INPUT: return "input";
	case ERR_UNSUPPORTED: return "unsupported";
	case ERR_ENDPOINT: return "endpoint";
	case ERR_INTERNAL: return "internal";
	case ERR_LOADER: return "loader";
	case ERR_INTERRUPTED: return "interrupted";
	}
	return "unknown";
}

int err_exit_status(enum err code)
{
	switch (code) {
	case ERR_OK: return EXIT_PASS;
	case ERR_ENDPOINT: return EXIT_ENDPOINT;
	case ERR_LOADER: return EXIT_LOADER;
	case ERR_INTERRUPTED: return EXIT_INTERRUPTED;
	case ERR_USAGE:
	case ERR_NOMEM:
	case ERR_LIMIT:
	case ERR_IO:
	case ERR_INPUT:
	case ERR_UNSUPPORTED:
	case ERR_INTERNAL:
		break;
	}
	return EXIT_USAGE;
}
