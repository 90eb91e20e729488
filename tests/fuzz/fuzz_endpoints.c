/*
 * fuzz_endpoints — the endpoints file (--endpoints FILE, harness/net/endpoint.h):
 * arbitrary bytes as the file. A list that reads holds 1 to `max` URLs, each
 * non-empty, without blanks, '#' or line breaks, and inside the file's buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/endpoint.h"
#include "tmpfile.h"

#define MAX 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_tmp_write(data, size, ".txt");
	const char *urls[MAX];
	struct buf file;
	struct diag d;
	int n = 0, i;

	if (!path)
		abort();
	buf_init(&file, 1 << 20);
	diag_init(&d);
	if (!endpoint_read_list(path, &file, urls, &n, MAX, &d)) {
		if (n < 1 || n > MAX)
			abort();
		for (i = 0; i < n; i++)
			if (!*urls[i] || strpbrk(urls[i], " \t\r\n#") || urls[i] < file.data ||
			    urls[i] >= file.data + file.len)
				abort();
	}
	buf_release(&file);
	return 0;
}
