/*
 * Unit tests of xml: element text and attribute values escaped, the
 * characters XML 1.0 forbids replaced, UTF-8 kept, the buffer's cap obeyed.
 */
#include "base/buf.h"
#include "base/xml.h"
#include "t.h"

static void test_text(void)
{
	struct buf b;

	buf_init(&b, 1 << 10);
	CHECK(xml_text(&b, "a<b>&\"c' \t\n\x01\x1f\x7f é") == ERR_OK);
	CHECK_STR(b.data, "a&lt;b&gt;&amp;\"c' \t\n??? é");
	buf_reset(&b);
	CHECK(xml_attr(&b, "a<b>&\"c' \t\n\r\x02") == ERR_OK);
	CHECK_STR(b.data, "a&lt;b&gt;&amp;&quot;c&#39; &#9;&#10;&#13;?");
	buf_reset(&b);
	CHECK(xml_text(&b, "") == ERR_OK && b.len == 0);
	buf_release(&b);
	buf_init(&b, 8); /* the cap stops it: an error, not a silent cut */
	CHECK(xml_text(&b, "<<<<") != ERR_OK);
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_text);
	return T_DONE();
}
