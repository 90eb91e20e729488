/*
 * The merge table of harness/tok/tok_bpe.c on models built through its API: a
 * model of 256 letters (U+0100..U+01FF) with merges for about 3 in 7 of
 * their pairs (the table grows while it is filled), new ids
 * either rank + a constant (the table keeps no id array) or not; every
 * letter pair encodes to its merge or to both letters (the Bloom filter
 * turns none of the merges away), every triple to the merge of lower rank,
 * the same from the model's blob; merge ids at and past the table's limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "tok/tok_bpe.h"
#include "t.h"

#define NL 256
#define ID_MAX 2097150 /* the highest id a merge may join */

/* Letter x as UTF-8 in out[0..2). */
static void letter(size_t x, char *out)
{
	out[0] = (char)(0xC4 + (x >> 6));
	out[1] = (char)(0x80 | (x & 0x3F));
}

/* rank[x][y]: the merge of letters x, y, or -1; newid[x][y]: its token. */
static long rank[NL][NL], newid[NL][NL];

static int merged(size_t x, size_t y)
{
	return (x * 5 + y * 3 + x * y) % 7 < 3;
}

/* The letter model; `reversed`: new ids count down from the last rank. */
static struct bpe *build(int reversed)
{
	struct bpe_opts o = {0};
	struct diag d;
	struct bpe *b = NULL;
	size_t x, y, n = 0, total = 0;
	char s[4], u[2];

	diag_init(&d);
	CHECK(bpe_new(0, &b, &d) == ERR_OK);
	for (x = 0; x < NL; x++)
		for (y = 0; y < NL; y++)
			total += merged(x, y);
	for (x = 0; x < NL; x++) {
		letter(x, u);
		CHECK(bpe_add_token(b, u, 2, (uint32_t)x, &d) == ERR_OK);
	}
	for (x = 0; x < NL; x++) {
		for (y = 0; y < NL; y++) {
			rank[x][y] = newid[x][y] = -1;
			if (!merged(x, y))
				continue;
			letter(x, s);
			letter(y, s + 2);
			rank[x][y] = (long)n;
			newid[x][y] = NL + (long)(reversed ? total - 1 - n : n);
			CHECK(bpe_add_token(b, s, 4, (uint32_t)newid[x][y], &d) == ERR_OK);
			n++;
		}
	}
	for (x = 0; x < NL; x++) {
		for (y = 0; y < NL; y++) {
			letter(x, s);
			letter(y, u);
			if (merged(x, y))
				CHECK(bpe_add_merge(b, s, 2, u, 2, &d) == ERR_OK);
		}
	}
	CHECK(bpe_finish(b, &o, &d) == ERR_OK);
	CHECK_EQ_LONG(bpe_merge_count(b), total);
	CHECK(total > 16384); /* past the first sizes of the table */
	return b;
}

/* Encodes s[0..n) and compares with the `nwant` ids of `want`. */
static int encodes(const struct bpe *b, struct bpe_work *w, const char *s, size_t n,
		   const long *want, size_t nwant)
{
	uint32_t *ids = NULL;
	size_t nids = 0, cap = 0, i;
	int ok;

	ok = bpe_encode(b, w, s, n, &ids, &nids, &cap) == ERR_OK && nids == nwant;
	for (i = 0; ok && i < nids; i++)
		ok = ids[i] == (uint32_t)want[i];
	free(ids);
	return ok;
}

static void check_pairs(const struct bpe *b, struct bpe_work *w)
{
	size_t x, y, bad = 0;

	for (x = 0; x < NL; x++) {
		for (y = 0; y < NL; y++) {
			char s[4];
			long one[1] = {newid[x][y]}, two[2] = {(long)x, (long)y};

			letter(x, s);
			letter(y, s + 2);
			if (rank[x][y] >= 0 ? !encodes(b, w, s, 4, one, 1) : !encodes(b, w, s, 4, two, 2))
				bad++;
		}
	}
	CHECK_EQ_LONG(bad, 0);
}

/* x y z: the pair of lower rank merges, the other letter stays alone (no
 * merge takes a merged token). */
static void check_triples(const struct bpe *b, struct bpe_work *w)
{
	size_t x, y, z, bad = 0;

	for (x = 0; x < NL; x += 17) {
		for (y = 0; y < NL; y++) {
			for (z = 0; z < NL; z += 5) {
				char s[6];
				long l = rank[x][y], r = rank[y][z], want[3] = {(long)x, (long)y, (long)z};
				size_t nw = 3;

				if (l >= 0 && (r < 0 || l <= r)) { /* ties: leftmost */
					want[0] = newid[x][y];
					want[1] = (long)z;
					nw = 2;
				} else if (r >= 0) {
					want[1] = newid[y][z];
					nw = 2;
				}
				letter(x, s);
				letter(y, s + 2);
				letter(z, s + 4);
				if (!encodes(b, w, s, 6, want, nw))
					bad++;
			}
		}
	}
	CHECK_EQ_LONG(bad, 0);
}

static void check_model(int reversed)
{
	struct bpe *b = build(reversed), *c = NULL;
	struct bpe_work *w = NULL;
	struct buf blob;

	buf_init(&blob, BUF_MAX_DEFAULT);
	CHECK(bpe_work_new(&w) == ERR_OK);
	check_pairs(b, w);
	check_triples(b, w);
	CHECK(bpe_save(b, &blob) == ERR_OK);
	CHECK(bpe_from_blob(blob.data, blob.len, &c) == ERR_OK);
	if (c) {
		check_pairs(c, w);
		check_triples(c, w);
	}
	bpe_free(c);
	bpe_free(b);
	bpe_work_free(w);
	buf_release(&blob);
}

static void test_uniform(void)
{
	check_model(0);
}

static void test_reversed(void)
{
	check_model(1);
}

/* A merge may join ids up to ID_MAX; one past it is refused at bpe_finish. */
static void test_id_limit(void)
{
	static const long want[1] = {1};
	uint32_t top;

	for (top = ID_MAX; top <= ID_MAX + 1; top++) {
		struct bpe_opts o = {0};
		struct diag d;
		struct bpe *b = NULL;
		struct bpe_work *w = NULL;
		enum err e;

		diag_init(&d);
		CHECK(bpe_new(0, &b, &d) == ERR_OK);
		CHECK(bpe_add_token(b, "a", 1, 0, &d) == ERR_OK);
		CHECK(bpe_add_token(b, "b", 1, top, &d) == ERR_OK);
		CHECK(bpe_add_token(b, "ab", 2, 1, &d) == ERR_OK);
		CHECK(bpe_add_merge(b, "a", 1, "b", 1, &d) == ERR_OK);
		e = bpe_finish(b, &o, &d);
		if (top == ID_MAX) {
			CHECK(e == ERR_OK);
			CHECK(bpe_work_new(&w) == ERR_OK);
			CHECK(encodes(b, w, "ab", 2, want, 1));
		} else {
			CHECK(e == ERR_LIMIT);
			CHECK_STR(d.msg, "merge 0 joins token id 2097151, above 2097150");
		}
		bpe_work_free(w);
		bpe_free(b);
	}
}

int main(void)
{
	T_RUN(test_uniform);
	T_RUN(test_reversed);
	T_RUN(test_id_limit);
	return T_DONE();
}
