/* progress — see progress.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "progress.h"

int progress_due(struct progress *p, double now_ms, int force)
{
	if (!force && now_ms - p->last_ms < (p->every_ms > 0 ? p->every_ms : PROGRESS_EVERY_MS))
		return 0;
	p->last_ms = now_ms;
	return 1;
}

/* The interval of the line off a terminal, in ms: NEEDLE_PROGRESS_SECONDS
 * when it is a number from 0.1 to 86400, else PROGRESS_LOG_EVERY_S. */
static double progress_log_every_ms(void)
{
	const char *env = getenv("NEEDLE_PROGRESS_SECONDS");
	char *end;
	double s = env ? strtod(env, &end) : 0;

	if (!env || end == env || *end || !(s >= 0.1 && s <= 86400))
		s = PROGRESS_LOG_EVERY_S;
	return s * 1000;
}

void progress_start(struct progress *p, int tty, double now_ms)
{
	p->every_ms = tty ? 0 : progress_log_every_ms();
	p->last_ms = tty ? 0 : now_ms;
}

void progress_utc(double s, char *out, size_t cap)
{
	time_t t = (time_t)s;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, cap, "%.0f", s);
}

void progress_duration(double s, char *out, size_t cap)
{
	long t = (long)(s + 0.5);

	if (t >= 3600)
		snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(out, cap, "%ld:%02ld", t / 60, t % 60);
}

void progress_line(const struct progress_state *st, char *out, size_t cap)
{
	char e1[32], e2[32], e3[32];
	int n;

	progress_duration(st->elapsed_s, e1, sizeof(e1));
	if (st->weight_done > 0 && st->weight_total >= st->weight_done)
		progress_duration(st->elapsed_s / st->weight_done *
				  (st->weight_total - st->weight_done), e2, sizeof(e2));
	else if (st->done && st->weight_total <= 0)
		progress_duration(st->elapsed_s / (double)st->done *
				  (double)(st->total - st->done), e2, sizeof(e2));
	else
		snprintf(e2, sizeof(e2), "?");
	n = snprintf(out, cap, "%zu/%zu  pass %zu  fail %zu  elapsed %s  eta %s", st->done,
		     st->total, st->pass, st->fail, e1, e2);
	if (st->slow_id && n >= 0 && (size_t)n < cap) {
		progress_duration(st->slow_s, e3, sizeof(e3));
		snprintf(out + n, cap - (size_t)n, "  slowest %.40s#%ld %s", st->slow_id,
			 st->slow_repeat, e3);
	}
}

/* The code point at s (UTF-8, lenient) and its length in bytes. */
static unsigned long code_point(const unsigned char *s, int *len)
{
	unsigned long c = s[0];
	int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4, i;

	if (n > 1)
		c &= 0x3Fu >> (n - 1);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			n = i;
			break;
		}
		c = (c << 6) | (s[i] & 0x3Fu);
	}
	*len = n;
	return c;
}

void progress_fit(char *line, int cols)
{
	unsigned char *s = (unsigned char *)line;
	int used = 0, len;

	while (*s) {
		int w = code_point(s, &len) >= 0x1100 ? 2 : 1;
		if (used + w > cols - 1)
			break;
		used += w;
		s += len;
	}
	*s = '\0';
}

int progress_columns(int fd)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");
	char *end;
	long n;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	n = env ? strtol(env, &end, 10) : 0;
	return env && !*end && n > 0 && n < 10000 ? (int)n : 80;
}
