/* Unit tests of uni: pattern rewriting, NFC, predicates, decoding. The
 * per-code-point comparison with the HF oracle is tests/cli/uni_classes.sh. */
#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "buf.h"
#include "uni.h"
#include "t.h"

/* Compiles the rewrite of `pat` and reports whether `subj` matches in full. */
static int full_match(const char *pat, const char *subj)
{
	struct buf b;
	struct diag d;
	pcre2_code *re;
	pcre2_match_data *md;
	int rc, en;
	PCRE2_SIZE off;

	buf_init(&b, BUF_MAX_DEFAULT);
	diag_init(&d);
	if (uni_rewrite_pattern(pat, strlen(pat), &b, &d)) {
		buf_release(&b);
		return -1;
	}
	re = pcre2_compile((PCRE2_SPTR)b.data, b.len,
			   PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED | PCRE2_ENDANCHORED,
			   &en, &off, NULL);
	buf_release(&b);
	if (!re)
		return -2;
	md = pcre2_match_data_create_from_pattern(re, NULL);
	rc = pcre2_match(re, (PCRE2_SPTR)subj, strlen(subj), 0, 0, md, NULL);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc > 0;
}

static void test_space(void)
{
	CHECK(full_match("\\s", " ") == 1);
	CHECK(full_match("\\s", "\xC2\x85") == 1);      /* U+0085 */
	CHECK(full_match("\\s", "\xE1\xA0\x8E") == 0);  /* U+180E */
	CHECK(full_match("\\S", "\xE1\xA0\x8E") == 1);
	CHECK(full_match("[\\s]", "\xE3\x80\x80") == 1); /* U+3000 */
	CHECK(full_match("[^\\s]", "\xE1\xA0\x8E") == 1);
	CHECK(full_match("\\s+(?!\\S)", "  ") == 1);
	CHECK(uni_is_space(0x3000) && !uni_is_space(0x180E) && !uni_is_space(0x200B));
}

static void test_nfc(void)
{
	struct buf b;

	buf_init(&b, BUF_MAX_DEFAULT);
	CHECK(uni_nfc("e\xCC\x81", 3, &b) == ERR_OK);
	CHECK_STR(b.data, "\xC3\xA9");
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_space);
	T_RUN(test_nfc);
	return T_DONE();
}
