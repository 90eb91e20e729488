/*
 * Unit tests of ctl: C0 controls (but tab and line feed), DEL, bytes that
 * are not UTF-8 and C1 controls escaped; UTF-8 and backslashes kept; the
 * in-place form leaves the head alone and a clean tail untouched.
 */
#include <string.h>

#include "base/buf.h"
#include "base/ctl.h"
#include "t.h"

static void test_escape(void)
{
	static const char hostile[] = "\x1b[2J\x1b]0;pwned\x07 ok\t\n\r\x7f \xc2\x9b" "2J \xc2\x85 \xc2\xa0 \xe6\xbc\xa2 \\x \xff\xc3";
	struct buf b;

	buf_init(&b, 1 << 10);
	CHECK(ctl_escape(&b, hostile, sizeof(hostile) - 1) == ERR_OK);
	CHECK_STR(b.data, "\\x1b[2J\\x1b]0;pwned\\x07 ok\t\n\\x0d\\x7f \\u009b2J \\u0085 \xc2\xa0 \xe6\xbc\xa2 \\x \\xff\\xc3");
	CHECK(ctl_first(hostile, sizeof(hostile) - 1) == 0);
	CHECK(ctl_first("plain \xe6\xbc\xa2\n", 10) == 10);
	buf_reset(&b);
	CHECK(ctl_escape(&b, "a\0b", 3) == ERR_OK && b.len == 6 && !memcmp(b.data, "a\\x00b", 6));
	buf_release(&b);
}

static void test_from(void)
{
	struct buf b;

	buf_init(&b, 1 << 10);
	CHECK(buf_puts(&b, "\x1bhead|") == ERR_OK && buf_puts(&b, "tail \x1b[K end") == ERR_OK);
	CHECK(ctl_escape_from(&b, 6) == ERR_OK);
	CHECK_STR(b.data, "\x1bhead|tail \\x1b[K end");
	CHECK(ctl_escape_from(&b, 0) == ERR_OK);
	CHECK_STR(b.data, "\\x1bhead|tail \\x1b[K end");
	CHECK(ctl_escape_from(&b, b.len) == ERR_OK);
	buf_release(&b);
	buf_init(&b, 10); /* the cap stops it: an error, not a silent cut */
	CHECK(buf_puts(&b, "\x1b\x1b\x1b") == ERR_OK);
	CHECK(ctl_escape_from(&b, 0) != ERR_OK);
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_escape);
	T_RUN(test_from);
	return T_DONE();
}
