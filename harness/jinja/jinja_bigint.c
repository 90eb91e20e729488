/* jinja_bigint — see jinja_int.h. Arithmetic on OpenSSL's BIGNUM, whose
 * libcrypto is loaded at the first big result (io_crypto_sym), as the
 * digests load it: a render that never leaves 64 bits never maps it. */
#include "jinja_int.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>

#include "base/io.h"

/* Bits of an integer of JV_BIGINT_MAX_DIGITS decimal digits, rounded up:
 * a result with more has more digits than Python 3.11 prints. */
#define BIG_MAX_BITS 14286

/* The BIGNUM functions needle calls, looked up once. */
static struct {
	BIGNUM *(*bn_new)(void);
	void (*bn_free)(BIGNUM *);
	BN_CTX *(*ctx_new)(void);
	void (*ctx_free)(BN_CTX *);
	int (*dec2bn)(BIGNUM **, const char *);
	char *(*bn2dec)(const BIGNUM *);
	void (*crypto_free)(void *, const char *, int);
	int (*add)(BIGNUM *, const BIGNUM *, const BIGNUM *);
	int (*sub)(BIGNUM *, const BIGNUM *, const BIGNUM *);
	int (*mul)(BIGNUM *, const BIGNUM *, const BIGNUM *, BN_CTX *);
	int (*div)(BIGNUM *, BIGNUM *, const BIGNUM *, const BIGNUM *, BN_CTX *);
	int (*exp)(BIGNUM *, const BIGNUM *, const BIGNUM *, BN_CTX *);
	int (*num_bits)(const BIGNUM *);
	int (*is_bit_set)(const BIGNUM *, int);
	int (*is_zero)(const BIGNUM *);
	int (*is_negative)(const BIGNUM *);
	void (*set_negative)(BIGNUM *, int);
	const BIGNUM *(*value_one)(void);
	int (*lshift)(BIGNUM *, const BIGNUM *, int);
	BN_ULONG (*get_word)(const BIGNUM *);
} bn;
static pthread_once_t bn_once = PTHREAD_ONCE_INIT;
static struct diag bn_diag; /* why the functions could not be had, or code 0 */

/* Each function's name and where its address goes (POSIX makes a function
 * pointer and void * convertible for dlsym, as io.c relies on). */
#define BN_SYM(field, name) { name, (void **)&bn.field }

static void bn_load(void)
{
	static const struct {
		const char *name;
		void **slot;
	} syms[] = {
		BN_SYM(bn_new, "BN_new"), BN_SYM(bn_free, "BN_free"),
		BN_SYM(ctx_new, "BN_CTX_new"), BN_SYM(ctx_free, "BN_CTX_free"),
		BN_SYM(dec2bn, "BN_dec2bn"), BN_SYM(bn2dec, "BN_bn2dec"),
		BN_SYM(crypto_free, "CRYPTO_free"), BN_SYM(add, "BN_add"), BN_SYM(sub, "BN_sub"),
		BN_SYM(mul, "BN_mul"), BN_SYM(div, "BN_div"), BN_SYM(exp, "BN_exp"),
		BN_SYM(num_bits, "BN_num_bits"), BN_SYM(is_bit_set, "BN_is_bit_set"),
		BN_SYM(is_zero, "BN_is_zero"), BN_SYM(is_negative, "BN_is_negative"),
		BN_SYM(set_negative, "BN_set_negative"), BN_SYM(value_one, "BN_value_one"),
		BN_SYM(lshift, "BN_lshift"), BN_SYM(get_word, "BN_get_word"),
	};
	size_t i;

	diag_init(&bn_diag);
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!(*syms[i].slot = io_crypto_sym(syms[i].name, &bn_diag)))
			return;
}

/* One operation's numbers: the operands, the results and a context. */
struct big {
	BIGNUM *a, *b, *r, *m;
	BN_CTX *ctx;
};

static void big_release(struct big *g)
{
	if (!bn.bn_free)
		return;
	bn.bn_free(g->a);
	bn.bn_free(g->b);
	bn.bn_free(g->r);
	bn.bn_free(g->m);
	bn.ctx_free(g->ctx);
}

static int to_bn(const struct jv *v, BIGNUM **out)
{
	char tmp[24];

	if (v->k == JV_BIGINT)
		return bn.dec2bn(out, v->u.s->data) > 0;
	snprintf(tmp, sizeof(tmp), "%" PRId64, v->u.i);
	return bn.dec2bn(out, tmp) > 0;
}

/* `a` and `b` (may be NULL) as BIGNUMs, with room for the results, after
 * loading libcrypto. */
static enum err big_init(struct je *e, const struct jn *at, const struct jv *a,
			 const struct jv *b, struct big *g)
{
	memset(g, 0, sizeof(*g));
	pthread_once(&bn_once, bn_load);
	if (bn_diag.code)
		return diag_fail(e->d, bn_diag.code, "%s", bn_diag.msg);
	if (!(g->r = bn.bn_new()) || !(g->m = bn.bn_new()) || !(g->ctx = bn.ctx_new()) ||
	    !to_bn(a, &g->a) || (b && !to_bn(b, &g->b)))
		return jinja_util_nomem(e, at);
	return ERR_OK;
}

static enum err refuse_digits(struct je *e, const struct jn *at)
{
	return jinja_util_refuse(e, at, "an integer of more than %d digits (Python 3.11 prints "
				 "none)", JV_BIGINT_MAX_DIGITS);
}

/* A value of `x`: an int when it fits 64 bits, else JV_BIGINT digits. */
static enum err from_bn(struct je *e, const struct jn *at, const BIGNUM *x, struct jv *out)
{
	char *dig;
	size_t n;
	enum err r = ERR_OK;

	if (bn.num_bits(x) > BIG_MAX_BITS)
		return refuse_digits(e, at);
	if (!(dig = bn.bn2dec(x)))
		return jinja_util_nomem(e, at);
	n = strlen(dig);
	if (n - (dig[0] == '-') > JV_BIGINT_MAX_DIGITS)
		r = refuse_digits(e, at);
	else if (bn.num_bits(x) < 64 || (bn.num_bits(x) == 64 && !strcmp(dig,
									   "-9223372036854775808")))
		*out = jinja_value_int(strtoll(dig, NULL, 10));
	else if (jinja_value_str_new(e->a, dig, n, out))
		r = jinja_util_nomem(e, at);
	else
		out->k = JV_BIGINT;
	bn.crypto_free(dig, __FILE__, __LINE__);
	return r;
}

/* Python's floor division and modulo from BN_div's truncating ones: the
 * remainder takes the divisor's sign. */
static int floor_divmod(struct big *g)
{
	if (!bn.div(g->r, g->m, g->a, g->b, g->ctx))
		return 0;
	if (bn.is_zero(g->m) || bn.is_negative(g->m) == bn.is_negative(g->b))
		return 1;
	return bn.sub(g->r, g->r, bn.value_one()) && bn.add(g->m, g->m, g->b);
}

/* Decimal digits of an int value (a 64-bit one counts 20). */
static size_t digits_of(const struct jv *v)
{
	return v->k == JV_BIGINT ? v->u.s->len : 20;
}

/* x ** y for y >= 0 (64 bits): the result's size is estimated from the
 * operands and checked against the value memory and the digits Python
 * prints before anything is computed. */
static enum err big_pow(struct je *e, const struct jn *at, const struct jv *a,
			const struct jv *b, struct jv *out)
{
	struct big g;
	double bits;
	enum err r;

	if (b->k == JV_BIGINT || b->u.i < 0)
		return jinja_util_refuse(e, at, "a power of an integer beyond 64 bits with %s",
					 b->k == JV_BIGINT ? "an exponent beyond 64 bits"
					 : "a negative exponent");
	if ((r = big_init(e, at, a, b, &g)))
		goto out;
	bits = (double)(bn.num_bits(g.a) - 1) * (double)b->u.i + 1.0;
	if (jinja_util_room(e, at, bits * 0.30103 > 1e18 ? SIZE_MAX : (size_t)(bits * 0.30103)))
		r = e->d->code;
	else if (bits > BIG_MAX_BITS + 1)
		r = refuse_digits(e, at);
	else if (jinja_util_work(e, at, (size_t)(bits * bits / 1024.0) + 64))
		r = e->d->code;
	else if (!bn.exp(g.r, g.a, g.b, g.ctx))
		r = jinja_util_nomem(e, at);
	else
		r = from_bn(e, at, g.r, out);
out:
	big_release(&g);
	return r;
}

/* a / b rounded once, as CPython's long_true_divide: a quotient of 62 or 63
 * bits whose lowest bit is set when a remainder is left (so that the one
 * rounding to 53 bits, converting it to double, sees every bit below), then
 * scaled by a power of two, exactly. A result that could be subnormal (and
 * so rounded twice) is refused. */
static enum err big_truediv(struct je *e, const struct jn *at, const struct jv *a,
			    const struct jv *b, struct jv *out)
{
	struct big g;
	int neg, shift;
	double q;
	enum err r;

	if ((r = big_init(e, at, a, b, &g)))
		goto out;
	if (bn.is_zero(g.b)) {
		r = jinja_util_reject(e, at, "ZeroDivisionError: division by zero");
		goto out;
	}
	neg = bn.is_negative(g.a) != bn.is_negative(g.b);
	bn.set_negative(g.a, 0);
	bn.set_negative(g.b, 0);
	shift = bn.num_bits(g.a) - bn.num_bits(g.b) - 62;
	if (!bn.is_zero(g.a) && shift + 62 < -1020) {
		r = jinja_util_refuse(e, at, "a true division of integers below 2**-1020");
		goto out;
	}
	if (!(shift > 0 ? bn.lshift(g.b, g.b, shift) : bn.lshift(g.a, g.a, -shift)) ||
	    !bn.div(g.r, g.m, g.a, g.b, g.ctx)) {
		r = jinja_util_nomem(e, at);
		goto out;
	}
	q = ldexp((double)(bn.get_word(g.r) | !bn.is_zero(g.m)), shift);
	if (isinf(q))
		r = jinja_util_reject(e, at, "OverflowError: integer division result too large for "
				      "a float");
	else
		*out = jinja_value_float(neg ? -q : q);
out:
	big_release(&g);
	return r;
}

enum err jinja_bigint_arith(struct je *e, const struct jn *at, int op, const struct jv *a,
			    const struct jv *b, struct jv *out)
{
	struct big g;
	enum err r;
	int ok;

	if (op == '/')
		return big_truediv(e, at, a, b, out);
	if (op == 'p')
		return big_pow(e, at, a, b, out);
	if (jinja_util_work(e, at, digits_of(a) * digits_of(b) / 16 + digits_of(a) + digits_of(b)))
		return e->d->code;
	if ((r = big_init(e, at, a, b, &g)))
		goto out;
	if ((op == 'f' || op == '%') && bn.is_zero(g.b)) {
		r = jinja_util_reject(e, at, "ZeroDivisionError: integer division or modulo by zero");
		goto out;
	}
	if (op == '*' && bn.num_bits(g.a) + bn.num_bits(g.b) > BIG_MAX_BITS + 1) {
		r = refuse_digits(e, at);
		goto out;
	}
	ok = op == '+' ? bn.add(g.r, g.a, g.b) : op == '-' ? bn.sub(g.r, g.a, g.b)
	     : op == '*' ? bn.mul(g.r, g.a, g.b, g.ctx) : floor_divmod(&g);
	r = ok ? from_bn(e, at, op == '%' ? g.m : g.r, out) : jinja_util_nomem(e, at);
out:
	big_release(&g);
	return r;
}

enum err jinja_bigint_neg(struct je *e, const struct jn *at, const struct jv *a, struct jv *out)
{
	char tmp[24];
	const char *d = tmp;
	struct buf b;
	enum err r = ERR_OK;

	if (a->k != JV_BIGINT && a->u.i != INT64_MIN) {
		*out = jinja_value_int(-a->u.i);
		return ERR_OK;
	}
	if (a->k == JV_BIGINT)
		d = a->u.s->data;
	else
		snprintf(tmp, sizeof(tmp), "%" PRId64, a->u.i);
	if (!strcmp(d, "9223372036854775808")) {
		*out = jinja_value_int(INT64_MIN);
		return ERR_OK;
	}
	buf_init(&b, jinja_util_buf_cap(e));
	if ((d[0] != '-' && buf_putc(&b, '-')) || buf_puts(&b, d + (d[0] == '-')) ||
	    jinja_value_str_buf(e->a, &b, out))
		r = jinja_util_nomem(e, at);
	buf_release(&b);
	if (!r)
		out->k = JV_BIGINT;
	return r;
}

/* The decimal text of an int value (`tmp` holds a 64-bit one's). */
static const char *dec_text(const struct jv *v, char tmp[24])
{
	if (v->k == JV_BIGINT)
		return v->u.s->data;
	snprintf(tmp, 24, "%" PRId64, v->u.i);
	return tmp;
}

int jinja_bigint_cmp(const struct jv *a, const struct jv *b)
{
	char ta[24], tb[24];
	const char *x = dec_text(a, ta), *y = dec_text(b, tb);
	size_t lx = strlen(x), ly = strlen(y);
	int nx = x[0] == '-', c;

	if (nx != (y[0] == '-'))
		return nx ? -1 : 1;
	c = lx != ly ? (lx < ly ? -1 : 1) : memcmp(x, y, lx);
	c = (c > 0) - (c < 0);
	return nx ? -c : c;
}

enum err jinja_bigint_digits(struct je *e, const struct jn *at, const struct jv *v, int base,
			     int upper, struct buf *out, int *neg)
{
	const char *digs = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	int step = base == 16 ? 4 : base == 8 ? 3 : 1, i, k, d;
	struct big g;
	enum err r;

	if ((r = big_init(e, at, v, NULL, &g)))
		goto out;
	*neg = bn.is_negative(g.a);
	for (i = (bn.num_bits(g.a) + step - 1) / step * step - step; i >= 0 && !r; i -= step) {
		for (d = 0, k = step - 1; k >= 0; k--)
			d = d * 2 + (bn.is_bit_set(g.a, i + k) != 0);
		if (buf_putc(out, digs[d]))
			r = jinja_util_nomem(e, at);
	}
out:
	big_release(&g);
	return r;
}

/* Whether p[0] is a digit or an underscore between two digits (s: the
 * text's start). */
static int digit_at(const char *s, const char *p)
{
	if (*p >= '0' && *p <= '9')
		return 1;
	return *p == '_' && p > s && p[-1] >= '0' && p[-1] <= '9' && p[1] >= '0' && p[1] <= '9';
}

enum err jinja_bigint_parse(struct je *e, const struct jn *at, const char *s, struct jv *out,
			    int *parsed)
{
	struct buf b;
	const char *p = s;
	enum err r = ERR_OK;

	*parsed = 0;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	buf_init(&b, jinja_util_buf_cap(e));
	if (*p == '-' && buf_putc(&b, '-'))
		r = jinja_util_nomem(e, at);
	if (*p == '+' || *p == '-')
		p++;
	for (; !r && digit_at(s, p); p++) {
		int leading = *p == '0' && b.len == (size_t)(b.data[0] == '-');

		if (*p != '_' && !leading && buf_putc(&b, *p))
			r = jinja_util_nomem(e, at);
	}
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (!r && !*p && b.len - (size_t)(b.data[0] == '-') > JV_BIGINT_MAX_DIGITS)
		r = refuse_digits(e, at);
	else if (!r && !*p && jinja_value_str_buf(e->a, &b, out))
		r = jinja_util_nomem(e, at);
	else if (!r && !*p)
		out->k = JV_BIGINT, *parsed = 1;
	buf_release(&b);
	return r;
}
