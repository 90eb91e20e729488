/* Unit tests of redact: the API key, URL credentials, their Basic form and the
 * URL form are replaced wherever they occur; short secrets are not searched
 * for alone; text without secrets is left as it was. */
#include <string.h>

#include "base/redact.h"
#include "t.h"

static void test_key_and_url(void)
{
	struct redact r;
	char s[300], raw[] = "a sk-live-0123 b\0c sk-live-0123";
	size_t n;

	redact_init(&r, "sk-live-0123", "http://alice:hunter22@h:8000/v1");
	snprintf(s, sizeof(s), "Bearer sk-live-0123, Basic YWxpY2U6aHVudGVyMjI=, "
		 "url http://alice:hunter22@h:8000/v1, pw hunter22, user alice");
	CHECK_EQ_LONG(redact_str(&r, s), 4);
	CHECK_STR(s, "Bearer ***, Basic ***, url http://h:8000/v1, pw ***, user alice");
	n = redact_bytes(&r, raw, sizeof(raw) - 1);
	CHECK_EQ_LONG(n, 13);
	CHECK(!memcmp(raw, "a *** b\0c ***", 13));
	CHECK(redact_found(&r, "x sk-live-0123", 14));
	CHECK(!redact_found(&r, "x sk-live-012", 13));
}

static void test_short_and_none(void)
{
	struct redact r;
	char s[] = "the key abc and http://u:p@h stay apart";

	redact_init(&r, "abc", "http://u:p@h");
	CHECK_EQ_LONG(redact_str(&r, s), 1); /* only the URL form */
	CHECK_STR(s, "the key abc and http://h stay apart");
	redact_init(&r, NULL, "https://host/v1");
	CHECK_EQ_LONG(r.n, 0);
	CHECK_EQ_LONG(redact_str(NULL, s), 0);
	CHECK_EQ_LONG(redact_bytes(NULL, s, 5), 5);
}

int main(void)
{
	T_RUN(test_key_and_url);
	T_RUN(test_short_and_none);
	return T_DONE();
}
