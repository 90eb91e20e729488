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
	/* U+FFFE, U+FFFF and bytes that are not UTF-8 (a lone continuation, a
	 * cut lead, a surrogate) become U+FFFD; U+FFFD and U+10000 stay */
	CHECK(xml_attr(&b, "a\xef\xbf\xbe b\xef\xbf\xbf c\x80 d\xed\xa0\x80 \xef\xbf\xbd\xf0\x90\x80\x80 \xe6\xbc") == ERR_OK);
	CHECK_STR(b.data, "a\xef\xbf\xbd b\xef\xbf\xbd c\xef\xbf\xbd d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xf0\x90\x80\x80 \xef\xbf\xbd\xef\xbf\xbd");
	buf_reset(&b);
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
