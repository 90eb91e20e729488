/* Unit tests of the core modules: buf, err/diag, io. */
#include <stdlib.h>

#include <openssl/evp.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/io.h"
#include "base/mem.h"
#include "t.h"

static void test_buf_grow_and_cap(void)
{
	struct buf b;
	size_t len;
	char *p;
	int i;

	buf_init(&b, 100);
	CHECK(b.data[0] == '\0' && b.len == 0);
	for (i = 0; i < 10; i++)
		CHECK(buf_puts(&b, "0123456789") == ERR_OK);
	CHECK_EQ_LONG(b.len, 100);
	CHECK(buf_putc(&b, 'x') == ERR_LIMIT);
	CHECK_EQ_LONG(b.len, 100); /* a failed append changes nothing */
	CHECK(b.data[100] == '\0');
	buf_truncate(&b, 5);
	CHECK_STR(b.data, "01234");
	CHECK(buf_printf(&b, "-%d-%s", 42, "z") == ERR_OK);
	CHECK_STR(b.data, "01234-42-z");
	p = buf_take(&b, &len);
	CHECK_STR(p, "01234-42-z");
	CHECK_EQ_LONG(len, 10);
	CHECK(b.len == 0 && b.data[0] == '\0');
	mem_free(p);
	buf_release(&b);
	buf_release(NULL);
}

static void test_buf_take_empty(void)
{
	struct buf b;
	char *p;

	buf_init(&b, 10);
	p = buf_take(&b, NULL);
	CHECK(p != NULL && p[0] == '\0');
	mem_free(p);
}

/* Writing in place: reserve, write at most buf_avail bytes, commit. */
static void test_buf_reserve_commit(void)
{
	struct buf b;

	buf_init(&b, 10);
	CHECK_EQ_LONG(buf_avail(&b), 0);
	buf_commit(&b, 3); /* nothing reserved: nothing counted */
	CHECK(b.len == 0 && b.data[0] == '\0');
	CHECK(buf_reserve(&b, 4) == ERR_OK);
	CHECK(buf_avail(&b) >= 4 && buf_avail(&b) <= 10);
	memcpy(b.data, "abcd", 4);
	buf_commit(&b, 4);
	CHECK_STR(b.data, "abcd");
	CHECK_EQ_LONG(b.len, 4);
	CHECK_EQ_LONG(buf_avail(&b), 6); /* the cap, not the memory, bounds it */
	CHECK(buf_reserve(&b, 7) == ERR_LIMIT);
	memset(b.data + b.len, 'x', buf_avail(&b));
	buf_commit(&b, 100); /* cut to what is available */
	CHECK_EQ_LONG(b.len, 10);
	CHECK_STR(b.data, "abcdxxxxxx");
	CHECK_EQ_LONG(buf_avail(&b), 0);
	buf_release(&b);
}

/* RFC 4648 section 10's test vectors, one byte split, and all 256 values. */
static void test_buf_base64(void)
{
	static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==",
					   "Zm9vYmE=", "Zm9vYmFy"};
	unsigned char all[256];
	struct buf b;
	size_t i;

	buf_init(&b, BUF_MAX_DEFAULT);
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		buf_reset(&b);
		CHECK(buf_base64(&b, in[i], strlen(in[i])) == ERR_OK);
		CHECK_STR(b.data, want[i]);
	}
	buf_reset(&b);
	CHECK(buf_puts(&b, "x:") == ERR_OK);
	CHECK(buf_base64(&b, "\xfb\xff\xbf", 3) == ERR_OK); /* the last two letters */
	CHECK_STR(b.data, "x:+/+/");
	for (i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	buf_reset(&b);
	CHECK(buf_base64(&b, all, sizeof(all)) == ERR_OK);
	CHECK_EQ_LONG(b.len, 344);
	CHECK(!strncmp(b.data, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g", 44));
	CHECK_STR(b.data + 332, "+fr7/P3+/w==");
	buf_release(&b);
	buf_init(&b, 7);
	CHECK(buf_puts(&b, "ab") == ERR_OK);
	CHECK(buf_base64(&b, "foob", 4) == ERR_LIMIT); /* 8 characters past a cap of 7 */
	CHECK_STR(b.data, "ab");
	buf_release(&b);
}

/* Against OpenSSL's encoder, for every length 0..300 of pseudo-random bytes. */
static void test_buf_base64_openssl(void)
{
	unsigned char in[300], ref[404];
	unsigned x = 12345;
	struct buf b;
	size_t n;

	for (n = 0; n < sizeof(in); n++)
		in[n] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
	buf_init(&b, BUF_MAX_DEFAULT);
	for (n = 0; n <= sizeof(in); n++) {
		EVP_EncodeBlock(ref, in, (int)n);
		buf_reset(&b);
		CHECK(buf_base64(&b, in, n) == ERR_OK);
		CHECK_STR(b.data, (const char *)ref);
	}
	buf_release(&b);
}

static void test_diag_sticky(void)
{
	struct diag d;

	diag_init(&d);
	CHECK(diag_fail(&d, ERR_INPUT, "bad '%s'", "x") == ERR_INPUT);
	CHECK(diag_fail(&d, ERR_IO, "later") == ERR_IO);
	CHECK(d.code == ERR_INPUT);
	diag_prefix(&d, "f.json");
	CHECK_STR(d.msg, "f.json: bad 'x'");
	CHECK_EQ_LONG(err_exit_status(ERR_ENDPOINT), 3);
	CHECK_EQ_LONG(err_exit_status(ERR_INPUT), 2);
}

static void test_io_sha256(void)
{
	char hex[IO_SHA256_HEX];
	char *a = mem_alloc(1000000);

	CHECK(!io_sha256_hex("abc", 3, hex, NULL));
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK(!io_sha256_hex("", 0, hex, NULL));
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* FIPS 180-2's long message: a million 'a's, many blocks */
	CHECK(a != NULL);
	if (a) {
		memset(a, 'a', 1000000);
		CHECK(!io_sha256_hex(a, 1000000, hex, NULL));
		CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	}
	mem_free(a);
}

static void test_io_missing(void)
{
	struct buf b;
	struct diag d;

	buf_init(&b, 1024);
	diag_init(&d);
	CHECK(io_read_file("/nonexistent/x", &b, &d) == ERR_IO);
	CHECK_STR(d.msg, "cannot read '/nonexistent/x': No such file or directory");
	buf_release(&b);
}

int main(void)
{
	T_RUN(test_buf_grow_and_cap);
	T_RUN(test_buf_take_empty);
	T_RUN(test_buf_reserve_commit);
	T_RUN(test_buf_base64);
	T_RUN(test_buf_base64_openssl);
	T_RUN(test_diag_sticky);
	T_RUN(test_io_sha256);
	T_RUN(test_io_missing);
	return T_DONE();
}
