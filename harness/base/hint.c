#include "hint.h"

#include <string.h>

static int lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
}

/* Levenshtein distance, case-insensitive, 9 for names past HINT_NAME_MAX. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[HINT_NAME_MAX + 2];

	if (la > HINT_NAME_MAX || lb > HINT_NAME_MAX)
		return 9;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag +
				(lower(a[i - 1]) != lower(b[j - 1]));
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *hint_closest(const char *s, const char *const *names)
{
	const char *best = NULL;
	size_t bd = 99, limit = strlen(s) <= 4 ? 1 : 2;

	for (; *names; names++) {
		size_t dist = edit_distance(s, *names);
		if (dist < bd) {
			bd = dist;
			best = *names;
		}
	}
	return bd <= limit ? best : NULL;
}
