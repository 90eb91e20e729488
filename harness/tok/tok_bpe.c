#include "tok_bpe.h"

#include <string.h>

#include "base/buf.h"
#include "base/mem.h"

/* Pre-tokens of at most this many units use the linear scan (cache-friendly,
 * as tiktoken does below 100 bytes); longer ones the heap (HF's
 * Word::merge_all), so a 1 MB run of one character stays O(n log n). At 128
 * rather than 64 the Chinese bench's box-drawing lines (65 to 128 units)
 * take half the instructions they took in the heap. */
#define LINEAR_MAX 128
#define PAIR0_SIZE 0x10000
#define NO_RANK UINT32_MAX

/* Length of the UTF-8 sequence that starts with byte c (valid UTF-8). */
static size_t utf8_len(unsigned char c)
{
	return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* ---- hashing ---------------------------------------------------------- */

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* The first min(n, 8) bytes at p as a word, zero-padded, without reading
 * past p + n: two overlapping loads whose overlap holds the same bytes (a
 * variable-length memcpy would be a library call, a byte loop slower). */
static inline uint64_t load_upto8(const char *p, size_t n)
{
	uint64_t v = 0;
	uint32_t a, b;
	uint16_t c, e;

	if (n >= 8) {
		memcpy(&v, p, 8);
		return v;
	}
	if (n >= 4) {
		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		return (uint64_t)a | (uint64_t)b << (8 * (n - 4));
	}
	if (n >= 2) {
		memcpy(&c, p, 2);
		memcpy(&e, p + n - 2, 2);
		return (uint64_t)c | (uint64_t)e << (8 * (n - 2));
	}
	return n ? (unsigned char)p[0] : 0;
}

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0x100000001b3ULL), v;

	if (n <= 8) { /* most tokens and pre-tokens: one multiply */
		v = load_upto8(p, n);
		h = (h ^ v) * 0xff51afd7ed558ccdULL;
		return h ^ (h >> 32);
	}
	while (n >= 8) {
		memcpy(&v, p, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
		p += 8;
		n -= 8;
	}
	return mix64(h ^ load_upto8(p, n));
}

/* ---- byte strings -> value (vocab, count cache) ----------------------- */

/* Open addressing with the hash, length and first 8 key bytes in the slot,
 * so a lookup of a key of at most 8 bytes (most tokens and pre-tokens)
 * touches one slot and nothing else. */
struct sslot {
	uint64_t head; /* first 8 key bytes, zero-padded */
	uint32_t hash, len;
	uint32_t off;  /* key bytes in the arena (from 1); 0 = empty */
	uint32_t val;
};

struct smap {
	struct sslot *slot;
	size_t n, nslot; /* nslot: power of two */
	char *arena;
	size_t alen, acap;
};

static void smap_free(struct smap *m)
{
	mem_free_big(m->slot, m->nslot * sizeof(*m->slot));
	mem_free(m->arena);
	memset(m, 0, sizeof(*m));
}

static enum err smap_rehash(struct smap *m, size_t nslot)
{
	/* fresh zero pages cost nothing until touched */
	struct sslot *s = mem_calloc_big(nslot * sizeof(*s));
	size_t i;

	if (!s)
		return ERR_NOMEM;
	for (i = 0; i < m->nslot; i++) {
		size_t k;

		if (!m->slot[i].off)
			continue;
		for (k = m->slot[i].hash & (nslot - 1); s[k].off; k = (k + 1) & (nslot - 1))
			;
		s[k] = m->slot[i];
	}
	mem_free_big(m->slot, m->nslot * sizeof(*m->slot));
	m->slot = s;
	m->nslot = nslot;
	return ERR_OK;
}

static inline uint64_t head8(const char *k, size_t n)
{
	return load_upto8(k, n);
}

/* The slot holding key, or the empty slot where it would go. */
static inline struct sslot *smap_slot(const struct smap *m, const char *k, size_t n,
				      uint32_t h)
{
	uint64_t head = head8(k, n);
	size_t i;

	for (i = h & (m->nslot - 1);; i = (i + 1) & (m->nslot - 1)) {
		struct sslot *s = &m->slot[i];

		if (!s->off ||
		    (s->hash == h && s->len == n && s->head == head &&
		     (n <= 8 || !memcmp(m->arena + s->off + 8, k + 8, n - 8))))
			return s;
	}
}

static inline int smap_get_h(const struct smap *m, const char *k, size_t n,
			     uint32_t h, uint32_t *val)
{
	const struct sslot *s;

	if (!m->nslot)
		return 0;
	s = smap_slot(m, k, n, h);
	if (!s->off)
		return 0;
	*val = s->val;
	return 1;
}

static int smap_get(const struct smap *m, const char *k, size_t n, uint32_t *val)
{
	return smap_get_h(m, k, n, (uint32_t)hash_bytes(k, n), val);
}

/* Appends k[0..n) to the byte arena *a of *len bytes used and *cap held
 * (offsets into it stay below UINT32_MAX: ERR_LIMIT beyond). */
static enum err arena_add(char **a, size_t *len, size_t *cap, const char *k, size_t n)
{
	if (n >= UINT32_MAX || *len + n >= UINT32_MAX)
		return ERR_LIMIT;
	if (*len + n > *cap) {
		size_t c = *cap ? *cap * 2 : 65536;
		char *p;

		while (c < *len + n)
			c *= 2;
		if (!(p = mem_realloc(*a, c)))
			return ERR_NOMEM;
		*a = p;
		*cap = c;
	}
	memcpy(*a + *len, k, n);
	*len += n;
	return ERR_OK;
}

/* Copies k[0..n) to the end of the arena; `*off` gets its offset. */
static enum err smap_arena_add(struct smap *m, const char *k, size_t n, uint32_t *off)
{
	size_t at;
	enum err e;

	if (!m->alen)
		m->alen = 1; /* offset 0 marks an empty slot */
	at = m->alen;
	if (!(e = arena_add(&m->arena, &m->alen, &m->acap, k, n)))
		*off = (uint32_t)at;
	return e;
}

/* The slot count after nslot when one insert at a time fills the table (the
 * count cache): doubling, except that a table outgrowing SMAP_JUMP_FROM
 * slots goes straight to the smallest size of at least 2 MiB. Every 4 KiB
 * page of a table below 2 MiB faults on its own (mem_calloc_big), and a
 * cache that big usually keeps growing: the jump replaces the hundreds of
 * faults and the rehashes of the sizes in between with one mapping of
 * 2 MiB pages. */
#define SMAP_JUMP_FROM 8192
static size_t smap_grown(size_t nslot)
{
	size_t n = nslot ? nslot * 2 : 1024;

	if (n > SMAP_JUMP_FROM)
		while (n * sizeof(struct sslot) < ((size_t)2 << 20))
			n *= 2;
	return n;
}

/* Sets key -> val (overwriting); `*off` (may be NULL) gets the key's arena
 * offset. The table grows at 3/4 full: each slot holds the hash and the
 * first 8 key bytes, so the longer probe runs of linear probing at that load
 * rarely touch the arena (the DeepSeek bench cache, 66K entries, then stays
 * in 128K slots instead of moving to 256K). */
static enum err smap_put_h(struct smap *m, const char *k, size_t n, uint32_t h,
			   uint32_t val, uint32_t *off)
{
	struct sslot *s;

	if ((m->n + 1) * 4 > m->nslot * 3 && smap_rehash(m, smap_grown(m->nslot)))
		return ERR_NOMEM;
	s = smap_slot(m, k, n, h);
	if (s->off) {
		s->val = val;
		if (off)
			*off = s->off;
		return ERR_OK;
	}
	{
		uint32_t o;
		enum err e = smap_arena_add(m, k, n, &o);

		if (e)
			return e;
		*s = (struct sslot){head8(k, n), h, (uint32_t)n, o, val};
		if (off)
			*off = o;
	}
	m->n++;
	return ERR_OK;
}


/* ---- (left id, right id) -> (rank, new id) ---------------------------- */

/* Open addressing, one 8-byte word a slot holding both parts and the rank
 * (MMAP_ID_BITS, MMAP_RANK_BITS): 2 MB for DeepSeek V3's 128K merges, half
 * what 16-byte slots took, so more of the pairs met stay in L2. The id a
 * merge makes is its rank plus a constant in most tokenizers (each merge
 * adds the next id: DeepSeek V3, Qwen3, GPT-4o), else it is looked up in an
 * array by rank, which only an applied merge reads. On CJK text most
 * pairs looked up are no merge: a Bloom filter of the pairs with one bit a
 * pair (16 to 32 bits of filter a pair: 1 in 17 to 33 false positives; 256
 * KB for DeepSeek V3 at 1 in 17, 512 KB for Qwen3 at 1 in 29) turns most of
 * those away before they touch the table. One bit costs a multiply and a
 * load, where three bits in a 64-bit word (the filter before, at about 1 in
 * 130) cost twice the instructions a lookup, and the Chinese bench looks up
 * about a million pairs. A bigger filter is no faster: at 24 bits a pair
 * DeepSeek V3's doubles to 512 KB, and the bench's simulated misses of a 1
 * MiB cache rose 12 % for 0.1 % fewer instructions. */
#define MMAP_ID_BITS 21
#define MMAP_RANK_BITS 22
#define MMAP_ID_LIMIT ((1u << MMAP_ID_BITS) - 1)     /* ids below it */
#define MMAP_RANK_LIMIT ((1u << MMAP_RANK_BITS) - 1) /* ranks below it */

struct mmap {
	uint64_t *slot;  /* (left << 43 | right << 22 | rank) + 1; 0 = empty */
	size_t n, nslot; /* nslot: a power of two */
	uint32_t *rid;   /* rank -> new id, nrid entries; NULL if it is rank + delta */
	size_t nrid;
	uint32_t delta;
	uint64_t *bloom; /* nbloom words (a power of two) of bits, NULL until mmap_bloom */
	size_t nbloom;
};

static void mmap_free(struct mmap *m)
{
	mem_free_big(m->slot, m->nslot * sizeof(*m->slot));
	mem_free(m->rid);
	mem_free(m->bloom);
	memset(m, 0, sizeof(*m));
}

/* The hashed form of a pair (the slot holds its packed form). */
static inline uint64_t mmap_key(uint32_t l, uint32_t r)
{
	return (uint64_t)l << 32 | r;
}

/* Fibonacci hashing: the top bits of key * 2^64/phi. */
static inline size_t mmap_home(uint64_t key, size_t nslot)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - __builtin_ctzll(nslot)));
}

/* The pair of a slot, as it is compared: left << MMAP_ID_BITS | right. */
static inline uint64_t slot_pair(uint64_t s)
{
	return (s - 1) >> MMAP_RANK_BITS;
}

static inline uint32_t slot_rank(uint64_t s)
{
	return (uint32_t)((s - 1) & MMAP_RANK_LIMIT);
}

/* The bit of key in a Bloom filter of nbloom words: the top bits of a
 * multiplicative hash (both ids reach them) with another factor than
 * mmap_home's, so the bit and the slot are unrelated. */
static inline size_t pair_bit(uint64_t key, size_t nbloom)
{
	return (size_t)((key * 0xD6E8FEB86659FD93ULL) >> (58 - __builtin_ctzll(nbloom)));
}

/* Whether the Bloom filter lets key through (always without one). */
static inline int mmap_maybe(const struct mmap *m, uint64_t key)
{
	size_t bit;

	if (!m->bloom)
		return 1;
	bit = pair_bit(key, m->nbloom);
	return m->bloom[bit / 64] >> (bit % 64) & 1;
}

/* The hashed key of a filled slot. */
static inline uint64_t slot_key(uint64_t s)
{
	uint64_t p = slot_pair(s);

	return mmap_key((uint32_t)(p >> MMAP_ID_BITS), (uint32_t)(p & MMAP_ID_LIMIT));
}

static enum err mmap_rehash(struct mmap *m, size_t nslot)
{
	uint64_t *k = mem_calloc_big(nslot * sizeof(*k));
	size_t i;

	if (!k)
		return ERR_NOMEM;
	for (i = 0; i < m->nslot; i++) {
		size_t j;

		if (!m->slot[i])
			continue;
		for (j = mmap_home(slot_key(m->slot[i]), nslot); k[j]; j = (j + 1) & (nslot - 1))
			;
		k[j] = m->slot[i];
	}
	mem_free_big(m->slot, m->nslot * sizeof(*m->slot));
	m->slot = k;
	m->nslot = nslot;
	return ERR_OK;
}

/* Builds the Bloom filter of the pairs in the table (once it is filled):
 * at least 16 bits a pair. */
static enum err mmap_bloom(struct mmap *m)
{
	size_t i, n = 64;

	while (n * 64 < m->n * 16)
		n *= 2;
	mem_free(m->bloom);
	if (!(m->bloom = mem_calloc(n, sizeof(*m->bloom))))
		return ERR_NOMEM;
	m->nbloom = n;
	for (i = 0; i < m->nslot; i++) {
		if (m->slot[i]) {
			size_t bit = pair_bit(slot_key(m->slot[i]), n);

			m->bloom[bit / 64] |= 1ULL << (bit % 64);
		}
	}
	return ERR_OK;
}

/* The rank of merge (l, r) in *rank; 0 if there is none. */
static inline int mmap_get(const struct mmap *m, uint32_t l, uint32_t r, uint32_t *rank)
{
	uint64_t key = mmap_key(l, r), want = (uint64_t)l << MMAP_ID_BITS | r, s;
	size_t j;

	if (!m->nslot || l >= MMAP_ID_LIMIT || r >= MMAP_ID_LIMIT || !mmap_maybe(m, key))
		return 0;
	for (j = mmap_home(key, m->nslot); (s = m->slot[j]); j = (j + 1) & (m->nslot - 1)) {
		if (slot_pair(s) == want) {
			*rank = slot_rank(s);
			return 1;
		}
	}
	return 0;
}

/* The id that merge `rank` (one mmap_get gave) makes. */
static inline uint32_t mmap_id(const struct mmap *m, uint32_t rank)
{
	return m->rid ? m->rid[rank] : rank + m->delta;
}

/* Drops m->rid when the id of every rank in the table is rank + one delta
 * (ranks overwritten by a later duplicate or left out do not count). */
static void mmap_uniform(struct mmap *m)
{
	size_t i;
	uint32_t delta = 0, r;
	int have = 0;

	for (i = 0; i < m->nslot; i++) {
		if (!m->slot[i])
			continue;
		r = slot_rank(m->slot[i]);
		if (have && m->rid[r] - r != delta)
			return;
		delta = m->rid[r] - r;
		have = 1;
	}
	mem_free(m->rid);
	m->rid = NULL;
	m->nrid = 0;
	m->delta = delta;
}

/* Starts loading the slot where the lookup of (l, r) begins: lookups whose
 * slots were all prefetched overlap their cache misses. */
static inline void mmap_prefetch(const struct mmap *m, uint32_t l, uint32_t r)
{
	if (m->nslot)
		__builtin_prefetch(&m->slot[mmap_home(mmap_key(l, r), m->nslot)]);
}

/* Sets (l, r) -> (rank, id), overwriting an earlier rank of the pair; ids
 * below MMAP_ID_LIMIT, rank below MMAP_RANK_LIMIT and m->nrid. The table
 * grows at 3/4 full: short probe runs stay within a line or two of 8-byte
 * slots, and the Bloom filter spares most unsuccessful ones. */
static enum err mmap_put(struct mmap *m, uint32_t l, uint32_t r, uint32_t rank,
			 uint32_t id)
{
	uint64_t key = mmap_key(l, r), want = (uint64_t)l << MMAP_ID_BITS | r;
	size_t j;

	if ((m->n + 1) * 4 > m->nslot * 3 && mmap_rehash(m, m->nslot ? m->nslot * 2 : 4096))
		return ERR_NOMEM;
	for (j = mmap_home(key, m->nslot); m->slot[j]; j = (j + 1) & (m->nslot - 1))
		if (slot_pair(m->slot[j]) == want)
			break;
	if (!m->slot[j])
		m->n++;
	m->slot[j] = (want << MMAP_RANK_BITS | rank) + 1;
	m->rid[rank] = id;
	return ERR_OK;
}

/* ---- the model -------------------------------------------------------- */

#define PREFETCH_AHEAD 8

struct ptok {
	uint32_t off, len, hash, id;
};

struct pmerge {
	uint32_t off, ll, rl, hl, hr, rank; /* l at marena + off, r right after */
	uint32_t idl, idr, idn;
};

/* What the char-level start knows of one BMP character (see char_start),
 * in 4 bytes: the CJK block's stay in L2. */
struct cinfo {
	uint32_t id : 23;    /* its token T (valid if `has`) */
	uint32_t has : 1;    /* its bytes merge into one token below CINFO_ID_LIMIT
			      * (0 also for ASCII and surrogates, never filled) */
	uint32_t ok : 8;     /* bit x: atomic after a left neighbour of left_class x;
			      * bit 2 + y: before a right neighbour of right_class y */
};
#define CINFO_SIZE 0x10000
#define CINFO_ID_LIMIT (1u << 23)

struct bpe {
	struct bpe_opts o;
	char *unk;             /* owned copy of o.unk */
	struct smap vocab;     /* unit string (bytes) -> id */
	struct smap raw;       /* byte-level: vocab strings outside the table -> id */
	size_t ntokens;        /* vocab entries added (HF's get_vocab_size) */
	int64_t unit[256];     /* byte-level: id of each byte, -1 if none */
	int64_t fallback[256]; /* id of <0xXX>, -1 if none */
	int64_t unk_id;        /* -1 if none */
	struct mmap merges;
	size_t nmerges;
	uint32_t *roff, *rlen; /* id -> unit string in vocab.arena; rlen UINT32_MAX = none */
	size_t nr;             /* entries in roff/rlen */
	uint32_t last_new;     /* id made by the previous merge, to guess the next */
	/* byte-level, for the char-level start: the lowest rank of a merge
	 * with id as its left part whose right part starts with a byte of
	 * class c (minl[c][id], RIGHT_CLASSES), or as its right part whose left
	 * part ends with a byte of class c (minr[c][id], LEFT_CLASSES);
	 * NO_RANK if none; and the same for a right part that starts with
	 * the lead byte 0xE0 + j of a 3-byte character (minl3[j][id]). nmin
	 * entries each, all in one block at minl[0]; only while `ci` is
	 * built, NULL after. */
	uint32_t *minl[4], *minr[2], *minl3[16];
	size_t nmin;
	/* byte-level models with merges: the char-level start's facts of every
	 * BMP character by code point (CINFO_SIZE entries), made at load time
	 * so that counting only reads them; NULL for other models */
	struct cinfo *ci;
	/* with ci, by code point: bit j set if the character is atomic before
	 * a right neighbour whose lead byte is 0xE0 + j (a 3-byte character).
	 * The class of such a neighbour (cinfo.ok) stands for all sixteen lead
	 * bytes, so a merge of the character's end with one of them alone
	 * (Qwen3 has some with bare lead bytes) clears its class bit: this
	 * finer table, read only then, keeps the character atomic before the
	 * others. */
	uint16_t *ci3;
	/* bit id set: the model run on token id's own string gives id alone,
	 * so a pre-token equal to that string counts 1 (whole_token); nwhole
	 * bytes, NULL if not built */
	uint8_t *whole;
	size_t nwhole;
	/* a Bloom filter (one bit per string, by hash_bytes) of the strings
	 * of those tokens: most pre-tokens that are none of them (long CJK
	 * runs) are told so without a vocab lookup; nbloom bytes, a power of
	 * two, NULL with whole */
	uint8_t *bloom;
	size_t nbloom;
	/* byte-level models with merges and a unit for every byte: the rank
	 * of the merge of units (x, y) at [x << 8 | y], NO_RANK if none
	 * (PAIR0_SIZE entries, 256 KB), so that a pre-token starting from its
	 * bytes ranks its first pairs in the L2 cache; NULL for others */
	uint32_t *pair0;
	int borrowed;          /* the tables above live in a caller's blob (bpe_from_blob) */
	/* Loading is batched so that the hash-table misses of consecutive
	 * entries overlap (prefetched PREFETCH_AHEAD entries early): vocab
	 * entries wait here, their bytes already in vocab.arena, until the
	 * first merge or bpe_finish; merges (decoded l then r in marena) until
	 * bpe_finish. */
	struct ptok *ptok;
	size_t nptok, ptok_cap;
	struct pmerge *pm;
	size_t npm, pm_cap;
	char *marena;
	size_t malen, macap;
	unsigned char *scratch; /* decoding at load */
	size_t scratch_cap;
};

static uint16_t cp_to_byte[0x144]; /* GPT-2 table, inverted; 0x100 = none */
static uint32_t byte_to_cp[256];

/* Built once, before any use; the values never change, so a second build
 * racing with a reader writes what is already there. */
static void bytelevel_table(void)
{
	static int done;
	unsigned n = 0, b;

	if (done)
		return;
	for (b = 0; b < 0x144; b++)
		cp_to_byte[b] = 0x100;
	for (b = 0; b < 256; b++) {
		int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
				b >= 0xAE;

		byte_to_cp[b] = printable ? b : 256 + n++;
		cp_to_byte[byte_to_cp[b]] = (uint16_t)b;
	}
	done = 1;
}

long bpe_bytelevel_decode(const char *s, size_t n, unsigned char *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0;

	bytelevel_table();
	while (i < n) {
		unsigned v;

		if (u[i] < 0x80) {
			v = cp_to_byte[u[i]];
			i++;
		} else if (u[i] >= 0xC2 && u[i] <= 0xC5 && i + 1 < n &&
			   (u[i + 1] & 0xC0) == 0x80) {
			/* the table's characters are all below U+0144 */
			unsigned cp = (unsigned)(u[i] & 0x1F) << 6 | (u[i + 1] & 0x3F);

			v = cp < 0x144 ? cp_to_byte[cp] : 0x100;
			i += 2;
		} else {
			return -1;
		}
		if (v == 0x100)
			return -1;
		out[o++] = (unsigned char)v;
	}
	return (long)o;
}

enum err bpe_new(int byte_level, struct bpe **out, struct diag *d)
{
	struct bpe *b = mem_calloc(1, sizeof(*b));
	int i;

	*out = NULL;
	if (!b)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	b->o.byte_level = byte_level;
	for (i = 0; i < 256; i++)
		b->unit[i] = b->fallback[i] = -1;
	b->unk_id = -1;
	bytelevel_table();
	*out = b;
	return ERR_OK;
}

void bpe_free(struct bpe *b)
{
	if (!b)
		return;
	if (b->borrowed) {
		mem_free(b->unk);
		mem_free(b);
		return;
	}
	smap_free(&b->vocab);
	smap_free(&b->raw);
	mmap_free(&b->merges);
	mem_free(b->unk);
	mem_free(b->scratch);
	mem_free(b->ptok);
	mem_free(b->pm);
	mem_free(b->marena);
	mem_free(b->roff);
	mem_free(b->rlen);
	mem_free(b->minl[0]);
	mem_free(b->ci);
	mem_free(b->ci3);
	mem_free(b->whole);
	mem_free(b->bloom);
	mem_free(b->pair0);
	mem_free(b);
}

/* The unit string of `s` in this model: decoded bytes for byte-level models
 * (NULL if undecodable), else `s` itself. */
static const char *unit_string(struct bpe *b, const char *s, size_t n, size_t *len)
{
	long k;

	if (!b->o.byte_level) {
		*len = n;
		return s;
	}
	if (n > b->scratch_cap) {
		unsigned char *p = mem_realloc(b->scratch, n * 2);

		if (!p)
			return NULL;
		b->scratch = p;
		b->scratch_cap = n * 2;
	}
	k = bpe_bytelevel_decode(s, n, b->scratch);
	if (k < 0)
		return NULL;
	*len = (size_t)k;
	return (const char *)b->scratch;
}

static size_t pow2_at_least(size_t n)
{
	size_t p = 1024;

	while (p < n && p < ((size_t)1 << 24))
		p *= 2;
	return p;
}

/* Grows the array p of *cap elements of `size` bytes to at least `want`
 * (capped at 2^24, like the tables); *out gets the array, moved or not. */
static enum err reserve(void *p, size_t *cap, size_t want, size_t size, void **out)
{
	void *q;

	*out = p;
	if (want > ((size_t)1 << 24))
		want = (size_t)1 << 24;
	if (want <= *cap)
		return ERR_OK;
	if (!(q = mem_realloc(p, want * size)))
		return ERR_NOMEM;
	*out = q;
	*cap = want;
	return ERR_OK;
}

/* Besides the tables, the staging arrays the entries pass through are sized
 * up front: grown by doubling, each would fault in 4 KiB pages until it
 * reached the 2 MiB where mem_realloc starts advising huge pages (about 1,500
 * faults for DeepSeek V3's 128K merges). The byte counts per entry are
 * generous averages of real vocabularies. */
enum err bpe_reserve(struct bpe *b, size_t vocab, size_t merges)
{
	size_t vs = pow2_at_least(vocab * 2), ms = pow2_at_least(merges / 3 * 4 + 4);
	void *q;

	if (vs > b->vocab.nslot && smap_rehash(&b->vocab, vs))
		return ERR_NOMEM;
	if (ms > b->merges.nslot && mmap_rehash(&b->merges, ms))
		return ERR_NOMEM;
	if (reserve(b->ptok, &b->ptok_cap, vocab, sizeof(*b->ptok), &q))
		return ERR_NOMEM;
	b->ptok = q;
	if (reserve(b->vocab.arena, &b->vocab.acap, vocab * 8, 1, &q))
		return ERR_NOMEM;
	b->vocab.arena = q;
	if (reserve(b->pm, &b->pm_cap, merges, sizeof(*b->pm), &q))
		return ERR_NOMEM;
	b->pm = q;
	if (reserve(b->marena, &b->macap, merges * 12, 1, &q))
		return ERR_NOMEM;
	b->marena = q;
	return ERR_OK;
}

enum err bpe_add_token(struct bpe *b, const char *tok, size_t n, uint32_t id,
		       struct diag *d)
{
	size_t len;
	const char *u = unit_string(b, tok, n, &len);
	enum err e;

	b->ntokens++;
	if (!u) {
		/* unreachable from bytes, but an added token may name it */
		e = smap_put_h(&b->raw, tok, n, (uint32_t)hash_bytes(tok, n), id, NULL);
		return e ? diag_fail(d, e, "cannot load the vocabulary: out of memory") : ERR_OK;
	}
	if (id >= b->nr) {
		size_t c = b->nr ? b->nr : 4096;
		uint32_t *o, *l;

		while (c <= id)
			c *= 2;
		o = mem_realloc(b->roff, c * sizeof(*o));
		if (o)
			b->roff = o;
		l = o ? mem_realloc(b->rlen, c * sizeof(*l)) : NULL;
		if (!l)
			return diag_fail(d, ERR_NOMEM, "out of memory");
		b->rlen = l;
		memset(b->rlen + b->nr, 0xFF, (c - b->nr) * sizeof(*l));
		b->nr = c;
	}
	if (b->nptok == b->ptok_cap) {
		struct ptok *p = mem_grow(b->ptok, &b->ptok_cap, sizeof(*p), 4096);

		if (!p)
			return diag_fail(d, ERR_NOMEM, "out of memory");
		b->ptok = p;
	}
	{
		struct ptok *p = &b->ptok[b->nptok];

		e = smap_arena_add(&b->vocab, u, len, &p->off);
		if (e)
			return diag_fail(d, e, "cannot load the vocabulary: %s",
					 e == ERR_NOMEM ? "out of memory" : "too large");
		p->len = (uint32_t)len;
		p->hash = (uint32_t)hash_bytes(u, len);
		p->id = id;
		b->nptok++;
	}
	return ERR_OK;
}

/* Inserts the waiting vocab entries in order (a later duplicate string
 * takes the id, as smap_put_h does). */
static enum err vocab_flush(struct bpe *b)
{
	struct smap *m = &b->vocab;
	size_t i, need = (m->n + b->nptok + 1) * 2, ns = m->nslot ? m->nslot : 1024;

	while (ns < need)
		ns *= 2;
	if (ns > m->nslot && smap_rehash(m, ns))
		return ERR_NOMEM;
	for (i = 0; i < b->nptok; i++) {
		const struct ptok *p = &b->ptok[i];
		const char *k = m->arena + p->off;
		struct sslot *sl;

		if (i + PREFETCH_AHEAD < b->nptok)
			__builtin_prefetch(&m->slot[b->ptok[i + PREFETCH_AHEAD].hash & (m->nslot - 1)], 1);
		sl = smap_slot(m, k, p->len, p->hash);
		if (sl->off) {
			sl->val = p->id;
		} else {
			*sl = (struct sslot){head8(k, p->len), p->hash, p->len, p->off, p->id};
			m->n++;
		}
		b->roff[p->id] = p->off;
		b->rlen[p->id] = p->len;
	}
	b->nptok = 0;
	mem_free(b->ptok);
	b->ptok = NULL;
	b->ptok_cap = 0;
	return ERR_OK;
}

long bpe_token_id(const struct bpe *b, const char *tok, size_t n)
{
	uint32_t id;
	unsigned char tmp[512];
	long k;

	if (b->o.byte_level) {
		if (n > sizeof(tmp))
			return smap_get(&b->raw, tok, n, &id) ? (long)id : -1;
		k = bpe_bytelevel_decode(tok, n, tmp);
		if (k < 0)
			return smap_get(&b->raw, tok, n, &id) ? (long)id : -1;
		return smap_get(&b->vocab, (const char *)tmp, (size_t)k, &id) ? (long)id : -1;
	}
	return smap_get(&b->vocab, tok, n, &id) ? (long)id : -1;
}


/* Vocab id of unit string u[0..n): tries `guess` first (merge results are
 * usually numbered in merge order), then the hash table. */
static int unit_id(const struct bpe *b, const char *u, size_t n, uint32_t guess,
		   uint32_t *id)
{
	if (guess < b->nr && b->rlen[guess] == n &&
	    !memcmp(b->vocab.arena + b->roff[guess], u, n)) {
		*id = guess;
		return 1;
	}
	return smap_get(&b->vocab, u, n, id);
}

static enum err marena_add(struct bpe *b, const char *k, size_t n)
{
	return arena_add(&b->marena, &b->malen, &b->macap, k, n);
}

enum err bpe_add_merge(struct bpe *b, const char *l, size_t nl, const char *r,
		       size_t nr, struct diag *d)
{
	size_t rank = b->nmerges++, ul, ur;
	const char *u;
	struct pmerge *p;
	enum err e;

	if (rank >= UINT32_MAX)
		return diag_fail(d, ERR_LIMIT, "too many merges");
	if (b->nptok && vocab_flush(b))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if (b->npm == b->pm_cap) {
		if (!(p = mem_grow(b->pm, &b->pm_cap, sizeof(*p), 4096)))
			return diag_fail(d, ERR_NOMEM, "out of memory");
		b->pm = p;
	}
	p = &b->pm[b->npm];
	p->off = (uint32_t)b->malen;
	p->rank = (uint32_t)rank;
	/* a part outside the byte-level table cannot occur in a pre-token: the
	 * merge is left out (it keeps its rank) */
	if (!(u = unit_string(b, l, nl, &ul)))
		return ERR_OK;
	p->ll = (uint32_t)ul;
	p->hl = (uint32_t)hash_bytes(u, ul);
	if ((e = marena_add(b, u, ul)))
		goto fail;
	if (!(u = unit_string(b, r, nr, &ur))) {
		b->malen = p->off;
		return ERR_OK;
	}
	p->rl = (uint32_t)ur;
	p->hr = (uint32_t)hash_bytes(u, ur);
	if ((e = marena_add(b, u, ur)))
		goto fail;
	b->npm++;
	return ERR_OK;
fail:
	return diag_fail(d, e, e == ERR_NOMEM ? "out of memory" : "merges too large");
}

/* The unit string u[0..n) as written in tokenizer.json, for messages. */
static void unit_raw(const struct bpe *b, const char *u, size_t n, char *out, size_t cap)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 3 < cap; i++) {
		uint32_t cp = b->o.byte_level ? byte_to_cp[(unsigned char)u[i]] : (unsigned char)u[i];

		if (cp < 0x80) {
			out[o++] = (char)cp;
		} else if (b->o.byte_level) {
			out[o++] = (char)(0xC0 | cp >> 6);
			out[o++] = (char)(0x80 | (cp & 0x3F));
		} else {
			out[o++] = (char)cp;
		}
	}
	out[o] = '\0';
}

static enum err missing(const struct bpe *b, struct diag *d, size_t rank, const char *u,
			size_t n)
{
	char raw[256];

	unit_raw(b, u, n, raw, sizeof(raw));
	return diag_fail(d, ERR_INPUT, "merge %zu uses '%.200s', which is not in the vocabulary",
			 rank, raw);
}

/* Fills the merge table from the resolved waiting merges, in merge order
 * (the last duplicate pair wins), then its Bloom filter and new ids. */
static enum err merge_fill(struct bpe *b)
{
	struct mmap *m = &b->merges;
	size_t i, need = m->n + b->npm + 1, ns = m->nslot ? m->nslot : 4096;

	while (ns * 3 < need * 4)
		ns *= 2;
	if (ns > m->nslot && mmap_rehash(m, ns))
		return ERR_NOMEM;
	m->nrid = b->nmerges;
	if (!(m->rid = mem_alloc(b->nmerges * sizeof(*m->rid))))
		return ERR_NOMEM;
	memset(m->rid, 0xFF, b->nmerges * sizeof(*m->rid)); /* ranks left out */
	for (i = 0; i < b->npm; i++) {
		const struct pmerge *p = &b->pm[i];

		if (i + PREFETCH_AHEAD < b->npm)
			mmap_prefetch(m, b->pm[i + PREFETCH_AHEAD].idl, b->pm[i + PREFETCH_AHEAD].idr);
		if (mmap_put(m, p->idl, p->idr, p->rank, p->idn))
			return ERR_NOMEM;
	}
	if (mmap_bloom(m))
		return ERR_NOMEM;
	mmap_uniform(m);
	return ERR_OK;
}

/* Resolves the waiting merges' ids in merge order (the first bad merge is
 * the one reported), then fills the merge table. */
static enum err merge_flush(struct bpe *b, struct diag *d)
{
	const struct smap *v = &b->vocab;
	size_t i;
	enum err e = ERR_OK;

	if (b->nmerges > MMAP_RANK_LIMIT)
		return diag_fail(d, ERR_LIMIT, "too many merges (%zu; at most %u)", b->nmerges,
				 MMAP_RANK_LIMIT);
	for (i = 0; i < b->npm; i++) {
		struct pmerge *p = &b->pm[i];
		const char *cat = b->marena + p->off;

		if (i + PREFETCH_AHEAD < b->npm && v->nslot) {
			const struct pmerge *q = &b->pm[i + PREFETCH_AHEAD];

			__builtin_prefetch(&v->slot[q->hl & (v->nslot - 1)]);
			__builtin_prefetch(&v->slot[q->hr & (v->nslot - 1)]);
		}
		if (!smap_get_h(v, cat, p->ll, p->hl, &p->idl))
			return missing(b, d, p->rank, cat, p->ll);
		if (!smap_get_h(v, cat + p->ll, p->rl, p->hr, &p->idr))
			return missing(b, d, p->rank, cat + p->ll, p->rl);
		if (!unit_id(b, cat, p->ll + p->rl, b->last_new + 1, &p->idn))
			return diag_fail(d, ERR_INPUT,
					 "merge %u makes a token that is not in the vocabulary",
					 p->rank);
		b->last_new = p->idn;
		if (p->idl >= MMAP_ID_LIMIT || p->idr >= MMAP_ID_LIMIT)
			return diag_fail(d, ERR_LIMIT, "merge %u joins token id %u, above %u",
					 p->rank, p->idl > p->idr ? p->idl : p->idr, MMAP_ID_LIMIT - 1);
	}
	if (merge_fill(b))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	b->npm = 0;
	mem_free(b->pm);
	mem_free(b->marena);
	b->pm = NULL;
	b->marena = NULL;
	b->pm_cap = b->malen = b->macap = 0;
	return e;
}

/* Whether token `id` may end where a character ends: its last lead byte
 * has all its continuation bytes (a token of continuation bytes only may
 * end a character begun before it). */
static int ends_char(const struct bpe *b, uint32_t id)
{
	const unsigned char *t;
	size_t n, i;

	if (id >= b->nr || b->rlen[id] == UINT32_MAX)
		return 0;
	t = (const unsigned char *)b->vocab.arena + b->roff[id];
	n = b->rlen[id];
	for (i = n; i-- > 0;)
		if ((t[i] & 0xC0) != 0x80)
			return t[i] < 0x80 || n - i == utf8_len(t[i]);
	return 1;
}

/* Class of the byte that starts the right neighbour of a character: ASCII,
 * the lead byte of a 2-, 3- or 4-byte character (never a continuation). */
static unsigned right_class(unsigned char c)
{
	return c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
}

/* Class of the byte that ends the left neighbour of a character: ASCII or
 * a continuation byte. */
static unsigned left_class(unsigned char c)
{
	return c >= 0x80;
}

/* Fills b->minl and b->minr from the final merge table (the last duplicate
 * pair's rank, as lookups see it), leaving out merges that cannot join two
 * characters of valid UTF-8: a right part that starts with a continuation
 * byte, a left part whose last character is incomplete. */
static enum err build_min(struct bpe *b)
{
	size_t i, c, n = b->nr;
	uint32_t *all = mem_alloc(22 * n * sizeof(*all));

	if (!all)
		return ERR_NOMEM;
	memset(all, 0xFF, 22 * n * sizeof(*all));
	for (c = 0; c < 4; c++)
		b->minl[c] = all + c * n;
	for (c = 0; c < 2; c++)
		b->minr[c] = all + (4 + c) * n;
	for (c = 0; c < 16; c++)
		b->minl3[c] = all + (6 + c) * n;
	b->nmin = n;
	for (i = 0; i < b->merges.nslot; i++) {
		uint64_t s = b->merges.slot[i], k = slot_key(s);
		uint32_t l = (uint32_t)(k >> 32), r = (uint32_t)k, rank = slot_rank(s);
		unsigned char first, last;

		if (!s || l >= n || r >= n || b->rlen[l] == UINT32_MAX ||
		    b->rlen[r] == UINT32_MAX || !b->rlen[l] || !b->rlen[r])
			continue;
		first = (unsigned char)b->vocab.arena[b->roff[r]];
		last = (unsigned char)b->vocab.arena[b->roff[l] + b->rlen[l] - 1];
		if ((first & 0xC0) != 0x80 && rank < b->minl[right_class(first)][l])
			b->minl[right_class(first)][l] = rank;
		if ((first & 0xF0) == 0xE0 && rank < b->minl3[first & 0x0F][l])
			b->minl3[first & 0x0F][l] = rank;
		if (ends_char(b, l) && rank < b->minr[left_class(last)][r])
			b->minr[left_class(last)][r] = rank;
	}
	return ERR_OK;
}

static enum err build_whole(struct bpe *b);
static enum err build_chars(struct bpe *b);

/* Fills b->pair0 (struct bpe) when every byte has a unit. */
static enum err build_pair0(struct bpe *b)
{
	size_t x, y;

	for (x = 0; x < 256; x++)
		if (b->unit[x] < 0)
			return ERR_OK;
	if (!(b->pair0 = mem_alloc(PAIR0_SIZE * sizeof(*b->pair0))))
		return ERR_NOMEM;
	for (x = 0; x < 256; x++)
		for (y = 0; y < 256; y++)
			if (!mmap_get(&b->merges, (uint32_t)b->unit[x], (uint32_t)b->unit[y],
				      &b->pair0[x << 8 | y]))
				b->pair0[x << 8 | y] = NO_RANK;
	return ERR_OK;
}

enum err bpe_finish(struct bpe *b, const struct bpe_opts *o, struct diag *d)
{
	uint32_t id;
	int i;
	enum err e;

	if (b->nptok && vocab_flush(b))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if (b->npm && (e = merge_flush(b, d)))
		return e;
	b->o.byte_fallback = o->byte_fallback;
	b->o.fuse_unk = o->fuse_unk;
	b->o.ignore_merges = o->ignore_merges;
	if (o->unk) {
		b->unk = mem_strndup(o->unk, o->unk_len);
		if (!b->unk)
			return diag_fail(d, ERR_NOMEM, "out of memory");
		b->o.unk = b->unk;
		b->o.unk_len = o->unk_len;
	}

	for (i = 0; i < 256; i++) {
		char name[7] = "<0x00>", c = (char)i;
		static const char hex[] = "0123456789ABCDEF";

		name[3] = hex[i >> 4];
		name[4] = hex[i & 15];
		if (smap_get(&b->vocab, name, 6, &id))
			b->fallback[i] = id;
		if (b->o.byte_level && smap_get(&b->vocab, &c, 1, &id))
			b->unit[i] = id;
	}
	if (b->o.unk) {
		long u = bpe_token_id(b, b->o.unk, b->o.unk_len);

		if (u < 0)
			return diag_fail(d, ERR_INPUT, "unk_token '%s' is not in the vocabulary",
					 b->o.unk);
		b->unk_id = u;
	}
	if (b->o.byte_level && b->merges.n && b->nr &&
	    (build_min(b) || build_chars(b) || build_pair0(b)))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if (!b->o.ignore_merges && b->nr && build_whole(b))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

/* ---- the model as one blob (tok_cache) -------------------------------- */

#define BLOB_MAGIC 0x38424550454c4e4eULL /* "NNLEPEB8" */

/* Counts and scalars, then the arrays in this order, each padded to 8
 * bytes: unk, vocab slots, vocab arena, raw slots, raw arena, merge slots,
 * the merges' new ids, their Bloom filter, roff, rlen, the char-level start's tables (ci, ci3), the whole bitmap, its Bloom filter,
 * the byte pairs' ranks. */
struct blob_head {
	uint64_t magic, sizes; /* sizes: sizeof sslot, a merge slot, blob_head, cinfo */
	uint64_t vocab_n, vocab_nslot, vocab_alen, raw_n, raw_nslot, raw_alen;
	uint64_t merges_n, merges_nslot, merges_nrid, merges_delta, merges_nbloom, ntokens, nmerges, nr, nci, unk_len, nwhole, nbloom;
	uint64_t npair0;
	int64_t unit[256], fallback[256], unk_id;
	uint64_t opts; /* bits: byte_level, byte_fallback, fuse_unk, ignore_merges */
};

static uint64_t blob_sizes(void)
{
	return sizeof(struct sslot) | sizeof(uint64_t) << 8 | sizeof(struct blob_head) << 16 |
	       (uint64_t)sizeof(struct cinfo) << 32;
}

/* The zeros that pad n bytes to a multiple of 8. */
static enum err blob_pad(struct buf *out, size_t n)
{
	static const char zero[8];

	return buf_append(out, zero, (8 - n % 8) % 8) ? ERR_NOMEM : ERR_OK;
}

static enum err blob_put(struct buf *out, const void *p, size_t n)
{
	if (n && buf_append(out, p, n))
		return ERR_NOMEM;
	return blob_pad(out, n);
}

/* Entries of roff/rlen in use: one past the highest id with a string. */
static size_t ids_used(const struct bpe *b)
{
	size_t n = b->nr;

	while (n && b->rlen[n - 1] == UINT32_MAX)
		n--;
	return n;
}

enum err bpe_save(const struct bpe *b, struct buf *out)
{
	size_t used = ids_used(b);
	struct blob_head h = {BLOB_MAGIC, blob_sizes(),
			      b->vocab.n, b->vocab.nslot, b->vocab.alen,
			      b->raw.n, b->raw.nslot, b->raw.alen,
			      b->merges.n, b->merges.nslot, b->merges.nrid, b->merges.delta,
			      b->merges.nbloom,
			      b->ntokens, b->nmerges,
			      used, b->ci ? CINFO_SIZE : 0,
			      b->unk ? b->o.unk_len : 0,
			      b->nwhole < (used + 7) / 8 ? b->nwhole : (used + 7) / 8, b->nbloom,
			      b->pair0 ? PAIR0_SIZE : 0, {0}, {0}, b->unk_id,
			      (uint64_t)((b->o.byte_level != 0) | (b->o.byte_fallback != 0) << 1 |
					 (b->o.fuse_unk != 0) << 2 | (b->o.ignore_merges != 0) << 3)};

	memcpy(h.unit, b->unit, sizeof(h.unit));
	memcpy(h.fallback, b->fallback, sizeof(h.fallback));
	if (blob_put(out, &h, sizeof(h)) || blob_put(out, b->unk, h.unk_len) ||
	    blob_put(out, b->vocab.slot, h.vocab_nslot * sizeof(struct sslot)) ||
	    blob_put(out, b->vocab.arena, h.vocab_alen) ||
	    blob_put(out, b->raw.slot, h.raw_nslot * sizeof(struct sslot)) ||
	    blob_put(out, b->raw.arena, h.raw_alen) ||
	    blob_put(out, b->merges.slot, h.merges_nslot * sizeof(uint64_t)) ||
	    blob_put(out, b->merges.rid, h.merges_nrid * sizeof(uint32_t)) ||
	    blob_put(out, b->merges.bloom, h.merges_nbloom * sizeof(uint64_t)) ||
	    blob_put(out, b->roff, h.nr * sizeof(*b->roff)) ||
	    blob_put(out, b->rlen, h.nr * sizeof(*b->rlen)))
		return ERR_NOMEM;
	if (blob_put(out, b->ci, h.nci * sizeof(struct cinfo)) ||
	    blob_put(out, b->ci3, h.nci * sizeof(*b->ci3)))
		return ERR_NOMEM;
	if (blob_put(out, b->whole, h.nwhole) || blob_put(out, b->bloom, h.nbloom))
		return ERR_NOMEM;
	return blob_put(out, b->pair0, h.npair0 * sizeof(uint32_t));
}

/* The next `n` bytes of the blob (8-aligned), or NULL past its end. */
static const void *blob_take(const char *p, size_t len, size_t *at, uint64_t n)
{
	const char *r = p + *at;
	uint64_t padded = n + (8 - n % 8) % 8;

	if (n > len || padded > len - *at)
		return NULL;
	*at += (size_t)padded;
	return r;
}

static int pow2_or_zero(uint64_t n)
{
	return !(n & (n - 1));
}

/* Whether the counts of `h` are those of a model this build could have made
 * (every hash table keeps an empty slot, which ends its probes). */
static int blob_head_ok(const struct blob_head *h, size_t len)
{
	return h->magic == BLOB_MAGIC && h->sizes == blob_sizes() &&
	       pow2_or_zero(h->vocab_nslot) && pow2_or_zero(h->raw_nslot) &&
	       pow2_or_zero(h->merges_nslot) && pow2_or_zero(h->merges_nbloom) &&
	       h->merges_nbloom < len && (!h->merges_nrid || h->merges_nrid == h->nmerges) &&
	       h->nmerges < len && (!h->vocab_nslot || h->vocab_n < h->vocab_nslot) &&
	       (!h->raw_nslot || h->raw_n < h->raw_nslot) &&
	       (!h->merges_nslot || h->merges_n < h->merges_nslot) && h->vocab_alen < UINT32_MAX &&
	       h->raw_alen < UINT32_MAX && h->vocab_nslot < len && h->merges_nslot < len &&
	       h->nr < len && (!h->nci || h->nci == CINFO_SIZE) && h->unk_len < len && h->nwhole <= (h->nr + 7) / 8 &&
	       pow2_or_zero(h->nbloom) && !h->nwhole == !h->nbloom &&
	       (!h->npair0 || (h->npair0 == PAIR0_SIZE && h->nmerges));
}

/* Points the tables of `b` into the blob after the head. */
static int blob_tables(struct bpe *b, const struct blob_head *h, const char *p, size_t len,
		       size_t at)
{
	const char *unk = blob_take(p, len, &at, h->unk_len);

	b->vocab.slot = (struct sslot *)blob_take(p, len, &at, h->vocab_nslot * sizeof(struct sslot));
	b->vocab.arena = (char *)blob_take(p, len, &at, h->vocab_alen);
	b->raw.slot = (struct sslot *)blob_take(p, len, &at, h->raw_nslot * sizeof(struct sslot));
	b->raw.arena = (char *)blob_take(p, len, &at, h->raw_alen);
	b->merges.slot = (uint64_t *)blob_take(p, len, &at, h->merges_nslot * sizeof(uint64_t));
	b->merges.rid = (uint32_t *)blob_take(p, len, &at, h->merges_nrid * sizeof(uint32_t));
	b->merges.bloom = (uint64_t *)blob_take(p, len, &at, h->merges_nbloom * sizeof(uint64_t));
	b->roff = (uint32_t *)blob_take(p, len, &at, h->nr * sizeof(uint32_t));
	b->rlen = (uint32_t *)blob_take(p, len, &at, h->nr * sizeof(uint32_t));
	b->ci = (struct cinfo *)blob_take(p, len, &at, h->nci * sizeof(struct cinfo));
	b->ci3 = (uint16_t *)blob_take(p, len, &at, h->nci * sizeof(*b->ci3));
	b->whole = (uint8_t *)blob_take(p, len, &at, h->nwhole);
	b->bloom = (uint8_t *)blob_take(p, len, &at, h->nbloom);
	b->pair0 = (uint32_t *)blob_take(p, len, &at, h->npair0 * sizeof(uint32_t));
	if (!unk || !b->vocab.slot || !b->vocab.arena || !b->raw.slot || !b->raw.arena ||
	    !b->merges.slot || !b->merges.rid || !b->merges.bloom || !b->roff || !b->rlen || !b->ci || !b->ci3 ||
	    !b->whole || !b->bloom || !b->pair0 || at != len)
		return 0;
	if (h->unk_len && !(b->unk = mem_strndup(unk, h->unk_len)))
		return 0;
	return 1;
}

enum err bpe_from_blob(const void *blob, size_t len, struct bpe **out)
{
	const char *p = blob;
	struct blob_head h;
	struct bpe *b;

	*out = NULL;
	if (len < sizeof(h) || (uintptr_t)p % 8)
		return ERR_INPUT;
	memcpy(&h, p, sizeof(h));
	if (!blob_head_ok(&h, len) || !(b = mem_calloc(1, sizeof(*b))))
		return ERR_INPUT;
	b->borrowed = 1;
	if (!blob_tables(b, &h, p, len, sizeof(h))) {
		bpe_free(b);
		return ERR_INPUT;
	}
	b->vocab.n = h.vocab_n, b->vocab.nslot = h.vocab_nslot, b->vocab.alen = h.vocab_alen;
	b->raw.n = h.raw_n, b->raw.nslot = h.raw_nslot, b->raw.alen = h.raw_alen;
	b->merges.n = h.merges_n, b->merges.nslot = h.merges_nslot;
	b->merges.nrid = h.merges_nrid, b->merges.nbloom = h.merges_nbloom;
	b->merges.delta = (uint32_t)h.merges_delta;
	if (!h.merges_nrid)
		b->merges.rid = NULL;
	if (!h.merges_nbloom)
		b->merges.bloom = NULL;
	b->ntokens = h.ntokens, b->nmerges = h.nmerges, b->nr = h.nr;
	b->nwhole = h.nwhole, b->nbloom = h.nbloom;
	if (!h.nwhole)
		b->whole = b->bloom = NULL;
	if (!h.nci)
		b->ci = NULL, b->ci3 = NULL;
	if (!h.npair0)
		b->pair0 = NULL;
	memcpy(b->unit, h.unit, sizeof(h.unit));
	memcpy(b->fallback, h.fallback, sizeof(h.fallback));
	b->unk_id = h.unk_id;
	b->o = (struct bpe_opts){h.opts & 1, h.opts >> 1 & 1, h.opts >> 2 & 1, h.opts >> 3 & 1,
				 b->unk, b->unk ? h.unk_len : 0};
	bytelevel_table();
	*out = b;
	return ERR_OK;
}

size_t bpe_vocab_size(const struct bpe *b)
{
	return b->ntokens;
}

size_t bpe_merge_count(const struct bpe *b)
{
	return b->nmerges;
}

/* ---- encoding --------------------------------------------------------- */

struct lsym {
	uint32_t id, rank; /* symbol; rank of (this, next) */
};

struct hent {
	uint32_t rank, pos, id;
};

/* A small direct-mapped cache in front of the count cache for pre-tokens of
 * at most L0_KEY bytes (nearly all of them): at most 2^15 slots of 16 bytes
 * (512 KiB), which mostly stay in a 1 MiB L2, where the big table does not.
 * A slot packs key and count: bytes 0..7 in `head`; bytes 8..14, the length
 * and the count (4 bits each; a count is at most its key's length, and
 * l0_fill keeps out any that would not fit) in `tail`. An empty slot (all
 * zero) holds the empty key with count 0, which is right. On the English
 * bench (DeepSeek V3, whole process) 24-byte slots of 16-byte keys were 3 %
 * slower, 2^14 of these slots 2.5 % slower, 2^16 no faster (2^15 leave 115K
 * of 1M pieces to the count cache, 2^14 147K). It starts at 2^12 slots
 * (64 KiB) and takes its full size once the count cache holds 2^11
 * pre-tokens (l0_size), so that the many short texts gen haystack counts,
 * one work each, do not each clear 512 KiB. */
#define L0_MIN_BITS 12
#define L0_BITS 15
#define L0_KEY 15
#define L0_LEN_SHIFT 56
#define L0_COUNT_SHIFT 60
#define L0_KEY_MASK (((uint64_t)1 << L0_COUNT_SHIFT) - 1)
struct l0 {
	uint64_t head; /* key bytes 0..7, zero-padded */
	uint64_t tail; /* key bytes 8..14 | length << 56 | count << 60 */
};

struct bpe_work {
	struct l0 *l0;         /* 2^l0_bits slots (l0_size), NULL before the first count */
	unsigned l0_bits;
	uint32_t *ids;         /* symbols */
	struct lsym *lin;      /* linear scan: symbols with their right pair */
	int32_t *prev, *next;  /* heap: linked symbols */
	uint32_t *alive;       /* heap: 0 once merged into its left */
	size_t cap;
	struct hent *heap;
	size_t nheap, heap_cap;
	size_t nsym;
	struct smap cache;     /* pre-token bytes -> count */
	uint64_t *seen;        /* NULL, or SEEN_BITS bits: one set for each key of the cache */
};

enum err bpe_work_new(struct bpe_work **out)
{
	*out = mem_calloc(1, sizeof(**out));
	return *out ? ERR_OK : ERR_NOMEM;
}

void bpe_work_free(struct bpe_work *w)
{
	if (!w)
		return;
	mem_free(w->ids);
	mem_free(w->lin);
	mem_free(w->prev);
	mem_free(w->next);
	mem_free(w->alive);
	mem_free(w->heap);
	mem_free(w->l0);
	mem_free(w->seen);
	smap_free(&w->cache);
	mem_free(w);
}

static enum err grow(struct bpe_work *w, size_t n)
{
	size_t c = w->cap ? w->cap : 256;
	void *p;

	if (n <= w->cap)
		return ERR_OK;
	while (c < n)
		c *= 2;
#define GROW(f)                                                   \
	do {                                                      \
		p = mem_realloc(w->f, c * sizeof(*w->f));         \
		if (!p)                                           \
			return ERR_NOMEM;                         \
		w->f = p;                                         \
	} while (0)
	GROW(ids);
	GROW(lin);
	GROW(prev);
	GROW(next);
	GROW(alive);
#undef GROW
	w->cap = c;
	return ERR_OK;
}

/* Byte fallback of one unknown unit: the <0xXX> ids of its bytes if all
 * exist (HF formats the unit string's bytes; for a byte-level unit that is
 * the UTF-8 of its mapped character). */
static int push_fallback(const struct bpe *b, struct bpe_work *w,
			 const unsigned char *s, size_t n)
{
	unsigned char mapped[2];
	size_t i;

	if (b->o.byte_level) {
		uint32_t cp = byte_to_cp[s[0]];

		n = cp < 0x80 ? 1 : 2;
		mapped[0] = cp < 0x80 ? (unsigned char)cp : (unsigned char)(0xC0 | cp >> 6);
		mapped[1] = (unsigned char)(0x80 | (cp & 0x3F));
		s = mapped;
	}
	for (i = 0; i < n; i++)
		if (b->fallback[s[i]] < 0)
			return 0;
	for (i = 0; i < n; i++)
		w->ids[w->nsym++] = (uint32_t)b->fallback[s[i]];
	return 1;
}

/* The initial symbols of a pre-token (HF BPE::merge_word before merging). */
static void initial_symbols(const struct bpe *b, struct bpe_work *w,
			    const char *piece, size_t n)
{
	const unsigned char *s = (const unsigned char *)piece;
	int unk_pending = 0;
	size_t i = 0;

	w->nsym = 0;
	while (i < n) {
		size_t len = b->o.byte_level ? 1 : utf8_len(s[i]);
		int64_t id = -1;
		uint32_t v;

		if (len > n - i)
			len = n - i;
		if (b->o.byte_level)
			id = b->unit[s[i]];
		else if (smap_get(&b->vocab, piece + i, len, &v))
			id = v;
		if (id >= 0) {
			if (unk_pending)
				w->ids[w->nsym++] = (uint32_t)b->unk_id;
			unk_pending = 0;
			w->ids[w->nsym++] = (uint32_t)id;
		} else if (b->o.byte_fallback && push_fallback(b, w, s + i, len)) {
			/* HF `continue`s here without flushing a pending unk */
		} else if (b->unk_id >= 0) {
			if (unk_pending && !b->o.fuse_unk)
				w->ids[w->nsym++] = (uint32_t)b->unk_id;
			unk_pending = 1;
		}
		i += len;
	}
	if (unk_pending)
		w->ids[w->nsym++] = (uint32_t)b->unk_id;
}

/* The rank of the merge of symbols x and y, NO_RANK if none. */
static inline uint32_t rank_of(const struct bpe *b, uint32_t x, uint32_t y)
{
	uint32_t rank;

	return mmap_get(&b->merges, x, y, &rank) ? rank : NO_RANK;
}

static inline void pair_rank(const struct bpe *b, struct lsym *l)
{
	l[0].rank = rank_of(b, l[0].id, l[1].id);
}

/* Loads w->ids into the linear scan's symbols (lin_rank ranks them). */
static void lin_load(struct bpe_work *w)
{
	size_t i;

	for (i = 0; i < w->nsym; i++)
		w->lin[i].id = w->ids[i];
}

/* The scans for the lowest rank keep it and its pair's index in one word,
 * rank above (LOW_NONE: none yet), so that the minimum gives both, the
 * leftmost pair on ties, without a branch: ranks are data, and a branch on
 * each comparison mispredicted more than any other line on the Chinese
 * bench. */
#define LOW_NONE ((uint64_t)NO_RANK << 32)

/* `low` after pair i, of rank `rank`. */
static inline uint64_t low_step(uint64_t low, uint32_t rank, size_t i)
{
	uint64_t v = (uint64_t)rank << 32 | i;

	return v < low ? v : low;
}

/* The rank of `low` (NO_RANK if none), its pair's index in *best (0 if none). */
static inline uint32_t low_rank(uint64_t low, size_t *best)
{
	*best = (size_t)(uint32_t)low;
	return (uint32_t)(low >> 32);
}

/* Ranks each pair of the linear scan's symbols (their table slots
 * prefetched first, so that the misses of the lookups overlap); returns the
 * lowest rank (NO_RANK if none) and its leftmost pair in *best. */
static uint32_t lin_rank(const struct bpe *b, struct bpe_work *w, size_t *best)
{
	struct lsym *l = w->lin;
	size_t i, n = w->nsym;
	uint64_t low = LOW_NONE;

	for (i = 0; i + 1 < n; i++)
		mmap_prefetch(&b->merges, l[i].id, l[i + 1].id);
	for (i = 0; i + 1 < n; i++) {
		pair_rank(b, &l[i]);
		low = low_step(low, l[i].rank, i);
	}
	return low_rank(low, best);
}

/* lin_rank for the symbols of a byte-level pre-token started from its
 * bytes p[0..nsym), each its unit: the ranks from b->pair0. */
static uint32_t lin_rank_bytes(const struct bpe *b, struct bpe_work *w, const unsigned char *p,
			       size_t *best)
{
	struct lsym *l = w->lin;
	size_t i, n = w->nsym;
	uint64_t low = LOW_NONE;

	for (i = 0; i + 1 < n; i++) {
		l[i].rank = b->pair0[p[i] << 8 | p[i + 1]];
		low = low_step(low, l[i].rank, i);
	}
	return low_rank(low, best);
}

/* Merges every occurrence of the pair of rank r in l[0..n) from l[best]
 * (its leftmost), left to right, as long as no pair made on the way ranks
 * below r: the merges one at a time would take the same occurrences in the
 * same order (r stays the lowest rank and its next occurrence the
 * leftmost). A pair made below r ends the pass (lin_run's next scan finds
 * it). Returns the number of symbols left. */
static size_t merge_all(const struct bpe *b, struct lsym *l, size_t n, size_t best, uint32_t r)
{
	uint32_t id = mmap_id(&b->merges, r);
	size_t i, o;
	int made = 0, stop = 0, take;

	for (i = o = best; i < n; o++) {
		take = !stop && i + 1 < n && l[i].rank == r;
		/* the pair of the symbol just made and l[i] exists before l[i]
		 * merges */
		if (take && made && rank_of(b, l[o - 1].id, l[i].id) < r)
			take = 0, stop = 1;
		if (take) {
			l[o].id = id;
			i += 2;
		} else {
			l[o] = l[i++];
		}
		if (o > 0 && (made || take)) {
			pair_rank(b, &l[o - 1]);
			stop |= l[o - 1].rank < r;
		}
		made = take;
	}
	return o;
}

/* Repeatedly merges the lowest-rank pair, leftmost on ties, from the
 * symbols lin_rank ranked (r its lowest rank, at `best`), then copies them
 * to w->ids. A pair of two equal symbols (a run of one character, such as
 * a table's rule line) merges all its occurrences at once (merge_all), so
 * such a run takes a scan per round of merges, not per merge. */
static void lin_run(const struct bpe *b, struct bpe_work *w, uint32_t r, size_t best)
{
	struct lsym *l = w->lin;
	size_t i, n = w->nsym;
	uint64_t low;

	while (r != NO_RANK) {
		if (l[best].id == l[best + 1].id) {
			n = merge_all(b, l, n, best, r);
		} else {
			l[best].id = mmap_id(&b->merges, r);
			for (i = best + 1; i + 1 < n; i++)
				l[i] = l[i + 1];
			n--;
			if (best > 0)
				pair_rank(b, &l[best - 1]);
			if (best + 1 < n)
				pair_rank(b, &l[best]);
		}
		low = LOW_NONE;
		for (i = 0; i + 1 < n; i++)
			low = low_step(low, l[i].rank, i);
		r = low_rank(low, &best);
	}
	for (i = 0; i < n; i++)
		w->ids[i] = l[i].id;
	w->nsym = n;
}

static int hless(const struct hent *a, const struct hent *c)
{
	return a->rank != c->rank ? a->rank < c->rank : a->pos < c->pos;
}

static enum err heap_push(struct bpe_work *w, struct hent h)
{
	size_t i;

	if (w->nheap == w->heap_cap) {
		struct hent *p = mem_grow(w->heap, &w->heap_cap, sizeof(*p), 1024);

		if (!p)
			return ERR_NOMEM;
		w->heap = p;
	}
	i = w->nheap++;
	while (i > 0 && hless(&h, &w->heap[(i - 1) / 2])) {
		w->heap[i] = w->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	w->heap[i] = h;
	return ERR_OK;
}

static struct hent heap_pop(struct bpe_work *w)
{
	struct hent top = w->heap[0], last = w->heap[--w->nheap];
	size_t i = 0, n = w->nheap;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && hless(&w->heap[c + 1], &w->heap[c]))
			c++;
		if (!hless(&w->heap[c], &last))
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	if (n)
		w->heap[i] = last;
	return top;
}

static enum err push_pair(const struct bpe *b, struct bpe_work *w, size_t l, size_t r)
{
	uint32_t rank;

	if (!mmap_get(&b->merges, w->ids[l], w->ids[r], &rank))
		return ERR_OK;
	return heap_push(w, (struct hent){rank, (uint32_t)l, mmap_id(&b->merges, rank)});
}

/* HF's Word::merge_all: a heap of (rank, position); stale entries are
 * skipped by checking that the pair at the position still merges into the
 * same id. Compacts the surviving symbols into ids[0..nsym). */
static enum err merge_heap(const struct bpe *b, struct bpe_work *w)
{
	size_t i, n = w->nsym, k = 0;
	enum err e = ERR_OK;

	w->nheap = 0;
	for (i = 0; i < n; i++) {
		w->prev[i] = (int32_t)i - 1;
		w->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
		w->alive[i] = 1;
	}
	for (i = 0; !e && i + 1 < n; i++)
		e = push_pair(b, w, i, i + 1);
	while (!e && w->nheap) {
		struct hent t = heap_pop(w);
		uint32_t rank;
		int32_t nx;

		if (!w->alive[t.pos] || w->next[t.pos] < 0)
			continue;
		nx = w->next[t.pos];
		/* HF compares the new ids, not the ranks: an entry pushed for
		 * another pair at pos that makes the same token still merges */
		if (!mmap_get(&b->merges, w->ids[t.pos], w->ids[nx], &rank) ||
		    mmap_id(&b->merges, rank) != t.id)
			continue;
		w->ids[t.pos] = t.id;
		w->alive[nx] = 0;
		w->next[t.pos] = w->next[nx];
		if (w->next[nx] >= 0)
			w->prev[w->next[nx]] = (int32_t)t.pos;
		if (w->prev[t.pos] >= 0)
			e = push_pair(b, w, (size_t)w->prev[t.pos], t.pos);
		if (!e && w->next[t.pos] >= 0)
			e = push_pair(b, w, t.pos, (size_t)w->next[t.pos]);
	}
	for (i = 0; i < n; i++)
		if (w->alive[i])
			w->ids[k++] = w->ids[i];
	w->nsym = k;
	return e;
}

/* ---- the char-level start ---------------------------------------------
 *
 * A byte-level pre-token starts as bytes, and on CJK text most of its
 * merges only rebuild its characters. Call character d of a piece "atomic"
 * when its bytes alone merge into one token T_d by merges of ranks at most
 * I_d, and every merge that could join a symbol met on the way that starts
 * d (a prefix, or T_d) to d's actual left neighbour, or one that ends d to
 * its right neighbour, ranks above I_d (neighbours are told apart by the
 * class of the adjoining byte: left_class, right_class). Starting the piece
 * with T_d for every atomic d and bytes elsewhere gives the same tokens as
 * starting from bytes: run from bytes, an incomplete atomic d always has a
 * merge of its own (rank <= I_d) ranking below every merge that joins its
 * symbols to the outside, and every merge that T_d could take part in
 * ranks above I_d too, so replacing d's fragments by T_d at every moment
 * turns the byte run, step for step, into the run from the mixed start
 * (d's own merges become no-ops). A third of the symbols and pair lookups
 * on CJK; none of it on ASCII pieces, which skip it. */

static int is_ascii(const char *s, size_t n)
{
	uint64_t acc = 0, v;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, s + i, 8);
		acc |= v;
	}
	for (; i < n; i++)
		acc |= (unsigned char)s[i];
	return !(acc & 0x8080808080808080ULL);
}

/* Lowers cross[] (2 left classes, 4 right classes, then the 16 lead bytes
 * of a 3-byte right neighbour) to the ranks of the merges that may join
 * symbol `id`, bytes [a, z) of a k-byte character, to a neighbour of each
 * kind: as a right part if it starts the character, as a left part if it
 * ends it (the whole character does both). */
static void cross_ranks(const struct bpe *b, uint32_t id, size_t a, size_t z, size_t k,
			uint32_t cross[22])
{
	size_t c;

	if (id >= b->nmin)
		return;
	for (c = 0; a == 0 && c < 2; c++)
		cross[c] = b->minr[c][id] < cross[c] ? b->minr[c][id] : cross[c];
	for (c = 0; z == k && c < 4; c++)
		cross[2 + c] = b->minl[c][id] < cross[2 + c] ? b->minl[c][id] : cross[2 + c];
	for (c = 0; z == k && c < 16; c++)
		cross[6 + c] = b->minl3[c][id] < cross[6 + c] ? b->minl3[c][id] : cross[6 + c];
}

/* Runs BPE on the k bytes of one character alone and records when it is
 * atomic (struct cinfo; *ok3 as b->ci3 holds it). */
static void char_info(const struct bpe *b, const unsigned char *s, size_t k,
		      struct cinfo *out, uint16_t *ok3)
{
	uint32_t sym[4], top = 0, cross[22], rank;
	size_t at[5], n = k, i, best;

	memset(cross, 0xFF, sizeof(cross));
	*out = (struct cinfo){0, 0, 0};
	*ok3 = 0;
	for (i = 0; i < k; i++) {
		if (b->unit[s[i]] < 0)
			return;
		sym[i] = (uint32_t)b->unit[s[i]];
		at[i] = i;
		cross_ranks(b, sym[i], i, i + 1, k, cross);
	}
	at[k] = k;
	while (n > 1) {
		uint32_t r = NO_RANK;

		for (i = best = 0; i + 1 < n; i++)
			if (mmap_get(&b->merges, sym[i], sym[i + 1], &rank) && rank < r)
				r = rank, best = i;
		if (r == NO_RANK)
			return;
		sym[best] = mmap_id(&b->merges, r);
		for (i = best + 1; i + 1 < n; i++)
			sym[i] = sym[i + 1];
		for (i = best + 1; i < n; i++)
			at[i] = at[i + 1];
		n--;
		top = r > top ? r : top;
		cross_ranks(b, sym[best], at[best], at[best + 1], k, cross);
	}
	if (sym[0] >= CINFO_ID_LIMIT)
		return;
	out->id = sym[0];
	out->has = 1;
	for (i = 0; i < 6; i++)
		out->ok |= (top < cross[i]) << i;
	for (i = 0; i < 16; i++)
		*ok3 |= (uint16_t)((top < cross[6 + i]) << i);
}

/* Fills b->ci for every BMP character but the surrogates from b->minl and
 * b->minr, which it frees. */
static enum err build_chars(struct bpe *b)
{
	uint32_t cp;

	if (!(b->ci = mem_calloc(CINFO_SIZE, sizeof(*b->ci))) ||
	    !(b->ci3 = mem_calloc(CINFO_SIZE, sizeof(*b->ci3))))
		return ERR_NOMEM;
	for (cp = 0x80; cp < CINFO_SIZE; cp++) {
		unsigned char u[3] = {(unsigned char)(0xC0 | cp >> 6), (unsigned char)(0x80 | (cp & 0x3F))};

		if (cp >= 0xD800 && cp < 0xE000)
			continue;
		if (cp >= 0x800) {
			u[0] = (unsigned char)(0xE0 | cp >> 12);
			u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
			u[2] = (unsigned char)(0x80 | (cp & 0x3F));
		}
		char_info(b, u, cp >= 0x800 ? 3 : 2, &b->ci[cp], &b->ci3[cp]);
	}
	mem_free(b->minl[0]);
	memset(b->minl, 0, sizeof(b->minl));
	memset(b->minr, 0, sizeof(b->minr));
	memset(b->minl3, 0, sizeof(b->minl3));
	b->nmin = 0;
	return ERR_OK;
}

/* The initial symbols of the piece for the char-level start: T_c for each
 * character atomic between its neighbours, bytes for the others, in the
 * linear scan's symbols (w->lin). Returns 0 if a byte has no unit (the byte
 * start handles those). */
static int char_symbols(const struct bpe *b, struct bpe_work *w, const char *piece,
			size_t n)
{
	const unsigned char *s = (const unsigned char *)piece;
	struct lsym *l = w->lin; /* locals: the stores below may alias w */
	size_t i = 0, j, k, m = 0;

	w->nsym = 0;
	while (i < n) {
		const struct cinfo *c = NULL;
		uint32_t cp;

		k = utf8_len(s[i]);
		if (k > n - i)
			return 0;
		if (k == 3 && (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80) {
			cp = (uint32_t)(s[i] & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 |
			     (s[i + 2] & 0x3F);
			/* only a character's shortest form has its facts */
			if (cp >= 0x800)
				c = &b->ci[cp];
		} else if (k == 2 && (s[i + 1] & 0xC0) == 0x80) {
			cp = (uint32_t)(s[i] & 0x1F) << 6 | (s[i + 1] & 0x3F);
			if (cp >= 0x80)
				c = &b->ci[cp];
		}
		if (c && c->has && (!i || c->ok >> left_class(s[i - 1]) & 1) &&
		    (i + k == n || c->ok >> (2 + right_class(s[i + k])) & 1 ||
		     ((s[i + k] & 0xF0) == 0xE0 && b->ci3[cp] >> (s[i + k] & 0x0F) & 1))) {
			l[m++].id = c->id;
			i += k;
			continue;
		}
		for (j = 0; j < k; j++, i++) {
			if (b->unit[s[i]] < 0)
				return 0;
			l[m++].id = (uint32_t)b->unit[s[i]];
		}
	}
	w->nsym = m;
	return 1;
}

/* BPE of the piece from the char-level start (*done set), unless a byte
 * has no unit. */
static enum err from_chars(const struct bpe *b, struct bpe_work *w, const char *piece,
			   size_t n, int *done)
{
	size_t best, i;
	uint32_t r;

	if (!char_symbols(b, w, piece, n))
		return ERR_OK;
	*done = 1;
	if (w->nsym <= LINEAR_MAX) {
		r = lin_rank(b, w, &best);
		lin_run(b, w, r, best);
		return ERR_OK;
	}
	for (i = 0; i < w->nsym; i++)
		w->ids[i] = w->lin[i].id;
	return merge_heap(b, w);
}

/* Runs the model on one pre-token, leaving the result in w->ids[0..nsym). */
static enum err run_model(const struct bpe *b, struct bpe_work *w,
			  const char *piece, size_t n)
{
	uint32_t id;
	enum err e;

	if (b->o.ignore_merges && smap_get(&b->vocab, piece, n, &id)) {
		if ((e = grow(w, 1)))
			return e;
		w->ids[0] = id;
		w->nsym = 1;
		return ERR_OK;
	}
	/* byte fallback can emit 4 ids per unit */
	if ((e = grow(w, 4 * n + 1)))
		return e;
	if (b->ci && !is_ascii(piece, n)) {
		int done = 0;

		if ((e = from_chars(b, w, piece, n, &done)) || done)
			return e;
	}
	initial_symbols(b, w, piece, n);
	if (w->nsym <= LINEAR_MAX) {
		size_t best;
		uint32_t r;

		lin_load(w);
		if (b->pair0) /* then every byte is one symbol, its unit */
			r = lin_rank_bytes(b, w, (const unsigned char *)piece, &best);
		else
			r = lin_rank(b, w, &best);
		lin_run(b, w, r, best);
		return ERR_OK;
	}
	return merge_heap(b, w);
}

/* The L0 slot number of key `head`, `tail` (count bits clear) in a cache
 * of 2^(64 - shift) slots. */
static inline size_t l0_index(uint64_t head, uint64_t tail, unsigned shift)
{
	return (size_t)((head * 0x9E3779B97F4A7C15ULL + tail * 0xff51afd7ed558ccdULL) >> shift);
}

/* The L0 key of piece[0..n) (n <= L0_KEY). */
static inline void l0_key(const char *piece, size_t n, uint64_t *head, uint64_t *tail)
{
	*head = load_upto8(piece, n);
	*tail = (n > 8 ? load_upto8(piece + 8, n - 8) : 0) | (uint64_t)n << L0_LEN_SHIFT;
}

/* l0_key of p[0..n) where 16 bytes from p may be read: two loads and two
 * masks instead of load_upto8's branches on n, which pre-token lengths keep
 * mispredicting. The key is the same bytes zero-padded, so the same. */
static inline void l0_key_wide(const char *p, size_t n, uint64_t *head, uint64_t *tail)
{
	static const uint64_t lo[L0_KEY + 1] = {
		0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFF, 0xFFFFFFFFFFFF,
		0xFFFFFFFFFFFFFF, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL};
	static const uint64_t hi[L0_KEY + 1] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFF,
		0xFFFFFFFFFFFF, 0xFFFFFFFFFFFFFF};

	memcpy(head, p, 8);
	memcpy(tail, p + 8, 8);
	*head &= lo[n];
	*tail = (*tail & hi[n]) | (uint64_t)n << L0_LEN_SHIFT;
}

/* A text of at least this many bytes meets enough distinct pre-tokens
 * (the English bench: 66K in 4.5 MB, the Chinese one 55K in 2 MB) that its
 * first count sizes the caches for them at once (work_presize). Measured
 * on the bench texts' heads, DeepSeek V3: 5 % faster at 600 KB and 1 MB
 * (what tok_split gives each core of the Chinese bench), the same at 300
 * KB and, with the bound there, at 150 KB. */
#define BIG_TEXT ((size_t)1 << 19)
#define BIG_ARENA ((size_t)2 << 20)

/* Most of what a big text asks the count cache it does not hold (the
 * English bench, DeepSeek V3: 67K of 123K asks), and each such ask is a
 * miss of a 3 MiB table. A bit array of 2^19 bits (64 KiB, mostly in L2),
 * one bit set by the hash of each key the cache holds, answers most of
 * them (about 7 % false positives at the bench's 40K keys); a clear bit
 * proves the key absent, since every insert sets its bit. English DeepSeek
 * count 1 % faster, Chinese the same. */
#define SEEN_LOG 19
#define SEEN_BITS ((size_t)1 << SEEN_LOG)

static inline size_t seen_bit(uint32_t h)
{
	return h >> (32 - SEEN_LOG);
}

/* Whether the count cache may hold a key of hash `h`. */
static inline int seen_may(const struct bpe_work *w, uint32_t h)
{
	return !w->seen || (w->seen[seen_bit(h) / 64] >> (seen_bit(h) % 64) & 1);
}

/* Makes the L0 cache 2^L0_MIN_BITS slots, or 2^L0_BITS for a big text or
 * once the count cache holds more than half that many pre-tokens; the new
 * one starts empty (it is only a cache). */
static enum err l0_size(struct bpe_work *w, size_t len)
{
	unsigned bits = len >= BIG_TEXT || ((size_t)1 << L0_MIN_BITS) < 2 * w->cache.n
				? L0_BITS
				: L0_MIN_BITS;
	struct l0 *z;

	if (w->l0 && bits <= w->l0_bits)
		return ERR_OK;
	if (!(z = mem_calloc((size_t)1 << bits, sizeof(*z))))
		return ERR_NOMEM;
	if (bits == L0_BITS) /* 128 pages: ~250 faults fewer */
		mem_prefault(z, ((size_t)1 << bits) * sizeof(*z));
	mem_free(w->l0);
	w->l0 = z;
	w->l0_bits = bits;
	return ERR_OK;
}

/* Before the first count of a big text: the count cache at the size its
 * growth would jump to (smap_grown) and its key arena at BIG_ARENA bytes,
 * so the doublings on the way, their rehashes and copies and the page
 * faults of each new table are skipped (untouched pages cost nothing). */
static enum err work_presize(struct bpe_work *w)
{
	struct smap *m = &w->cache;
	char *a;

	if (!m->nslot && smap_rehash(m, smap_grown(SMAP_JUMP_FROM)))
		return ERR_NOMEM;
	if (!m->n && !w->seen) {
		if (!(w->seen = mem_calloc(SEEN_BITS / 64, sizeof(*w->seen))))
			return ERR_NOMEM;
		mem_prefault(w->seen, SEEN_BITS / 8);
	}
	if (m->acap < BIG_ARENA) {
		if (!(a = mem_realloc(m->arena, BIG_ARENA)))
			return ERR_NOMEM;
		m->arena = a;
		m->acap = BIG_ARENA;
	}
	return ERR_OK;
}

/* Whether pre-token piece[0..n) (hash_bytes `h`) is a vocab string whose
 * own run of the model gives its token alone: then it counts 1, no merging
 * needed (most distinct English words). */
/* The bit of hash `h` in a Bloom filter of `nbloom` bytes (a power of two). */
static inline size_t bloom_bit(uint32_t h, size_t nbloom)
{
	return (size_t)(((uint64_t)h * 0x9E3779B97F4A7C15ULL) >> 20) & (nbloom * 8 - 1);
}

static inline int whole_token(const struct bpe *b, const char *piece, size_t n, uint32_t h)
{
	size_t bit;
	uint32_t id;

	if (!b->whole)
		return 0;
	bit = bloom_bit(h, b->nbloom);
	return (b->bloom[bit / 8] >> (bit % 8) & 1) && smap_get_h(&b->vocab, piece, n, h, &id) && id / 8 < b->nwhole &&
	       (b->whole[id / 8] >> (id % 8) & 1);
}

/* Whether a pre-token of hash `h` that missed the count cache is looked up
 * in the vocab (the Bloom filter lets whole_token do it, or ignore_merges
 * makes it the model's first step): then the lookup's slot is worth
 * prefetching. */
static inline int looks_up_vocab(const struct bpe *b, uint32_t h)
{
	size_t bit;

	if (b->o.ignore_merges)
		return 1;
	if (!b->whole)
		return 0;
	bit = bloom_bit(h, b->nbloom);
	return b->bloom[bit / 8] >> (bit % 8) & 1;
}

/* The pre-tokens of a batch that bpe_count_many has not counted yet (the
 * L0 cache missed), and what it knows of each. */
struct pending {
	uint16_t j[BPE_BATCH_MAX]; /* index in the batch */
	uint32_t h[BPE_BATCH_MAX]; /* hash_bytes, once computed */
	uint8_t vocab[BPE_BATCH_MAX]; /* looks_up_vocab, once the count cache missed */
	size_t n;
};

/* Stores count v of pre-token piece[0..n) in the L0 cache if it fits. */
static void l0_fill(struct bpe_work *w, const char *piece, size_t n, uint32_t v)
{
	uint64_t head, tail;
	struct l0 *z;

	if (n <= L0_KEY && v < (1u << (64 - L0_COUNT_SHIFT))) {
		l0_key(piece, n, &head, &tail);
		z = &w->l0[l0_index(head, tail, 64 - w->l0_bits)];
		*z = (struct l0){head, tail | (uint64_t)v << L0_COUNT_SHIFT};
	}
}

/* Stores count v of pre-token piece[0..n) (hash h) in the L0 cache and in
 * the count cache (while it is below its bounds). */
static enum err remember(struct bpe_work *w, const char *piece, size_t n, uint32_t h,
			 uint32_t v)
{
	l0_fill(w, piece, n, v);
	if (w->cache.n >= BPE_CACHE_MAX_ENTRIES || w->cache.alen >= BPE_CACHE_MAX_BYTES)
		return ERR_OK;
	if (w->seen)
		w->seen[seen_bit(h) / 64] |= (uint64_t)1 << (seen_bit(h) % 64);
	return smap_put_h(&w->cache, piece, n, h, v, NULL);
}

/* Stage 1 of bpe_count_many: adds the counts the L0 cache gives; the rest
 * goes to `q`, with its count cache slot and Bloom filter byte prefetched. */
static void count_l0(const struct bpe *b, struct bpe_work *w, const char *s, size_t len,
		     const size_t *ms, const size_t *me, size_t k, struct pending *q, size_t *c)
{
	static const struct l0 none; /* for keys too long: tail[i] = ~0 never matches */
	const struct l0 *z[BPE_BATCH_MAX];
	uint64_t head[BPE_BATCH_MAX], tail[BPE_BATCH_MAX], hit, hd, tl;
	const struct l0 *l0 = w->l0; /* locals: the stores below may alias w */
	unsigned shift = 64 - w->l0_bits;
	size_t i;

	for (i = 0; i < k; i++) { /* the slots, prefetched */
		size_t at = ms[i], n = me[i] - at;

		if (n > L0_KEY) {
			z[i] = &none, head[i] = 0, tail[i] = ~0ULL;
			continue;
		}
		if (at + 16 <= len)
			l0_key_wide(s + at, n, &hd, &tl);
		else
			l0_key(s + at, n, &hd, &tl);
		z[i] = &l0[l0_index(hd, tl, shift)];
		head[i] = hd, tail[i] = tl;
		__builtin_prefetch(z[i]);
	}
	q->n = 0;
	for (i = 0; i < k; i++) { /* no branch on hit or miss, which mispredicts */
		hit = (z[i]->head == head[i]) & ((z[i]->tail & L0_KEY_MASK) == tail[i]);
		*c += (z[i]->tail >> L0_COUNT_SHIFT) & (0 - hit);
		q->j[q->n] = (uint16_t)i;
		q->n += 1 - hit;
	}
	for (i = 0; i < q->n; i++) {
		size_t j = q->j[i];

		q->h[i] = (uint32_t)hash_bytes(s + ms[j], me[j] - ms[j]);
		if (w->cache.nslot)
			__builtin_prefetch(&w->cache.slot[q->h[i] & (w->cache.nslot - 1)]);
		if (w->seen)
			__builtin_prefetch(&w->seen[seen_bit(q->h[i]) / 64]);
		if (b->whole)
			__builtin_prefetch(&b->bloom[bloom_bit(q->h[i], b->nbloom) / 8]);
	}
}

/* Stage 2: counts single bytes of a byte-level model (each a token), what
 * the count cache holds and what is too long for it; keeps in `q` the
 * misses, with their vocab slot prefetched when they will be looked up there. */
static enum err count_cached(const struct bpe *b, struct bpe_work *w, const char *s,
			     const size_t *ms, const size_t *me, struct pending *q, size_t *c)
{
	size_t i, m = 0;
	uint32_t v;
	enum err e;

	for (i = 0; i < q->n; i++) {
		const char *piece = s + ms[q->j[i]];
		size_t n = me[q->j[i]] - ms[q->j[i]];

		if (n > BPE_CACHE_MAX_KEY) {
			if ((e = run_model(b, w, piece, n)))
				return e;
			*c += w->nsym;
		} else if (n == 1 && b->o.byte_level && b->unit[(unsigned char)*piece] >= 0) {
			*c += 1;
			l0_fill(w, piece, n, 1);
		} else if (seen_may(w, q->h[i]) && smap_get_h(&w->cache, piece, n, q->h[i], &v)) {
			*c += v;
			l0_fill(w, piece, n, v);
		} else {
			q->vocab[m] = (uint8_t)looks_up_vocab(b, q->h[i]);
			if (q->vocab[m] && b->vocab.nslot)
				__builtin_prefetch(&b->vocab.slot[q->h[i] & (b->vocab.nslot - 1)]);
			q->j[m] = q->j[i], q->h[m++] = q->h[i];
		}
	}
	q->n = m;
	return ERR_OK;
}

/* A batch's pre-tokens go through the caches in stages, each over the
 * whole batch, so that the cache misses of one stage overlap (every address
 * is prefetched a stage ahead) instead of stalling one pre-token after
 * another: the L0 cache, then the count cache, then the whole-token check
 * and the model for the rest, first those that skip the vocab (their model
 * runs give the vocab slots of the others time to arrive). A whole token
 * goes to the L0 cache only: its check costs what a count cache lookup
 * would, and the count cache stays smaller and denser (the English bench:
 * 40K pre-tokens instead of 66K; DeepSeek count ~2 % faster, Chinese too).
 * A count is a sum, so the
 * order does not matter; a pre-token twice among the misses of one batch
 * is counted twice, the second time overwriting the first's cache entry
 * with the same count. */
enum err bpe_count_many(const struct bpe *b, struct bpe_work *w, const char *s, size_t len,
			const size_t *ms, const size_t *me, size_t k, size_t *count)
{
	struct pending q;
	size_t i, c = 0;
	uint32_t v;
	uint8_t pass;
	enum err e = ERR_OK;

	if (!w->l0 && len >= BIG_TEXT && (e = work_presize(w)))
		return e;
	if ((!w->l0 || (w->l0_bits < L0_BITS && ((size_t)1 << L0_MIN_BITS) < 2 * w->cache.n)) &&
	    (e = l0_size(w, len)))
		return e;
	count_l0(b, w, s, len, ms, me, k, &q, &c);
	if (q.n)
		e = count_cached(b, w, s, ms, me, &q, &c);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < q.n && !e; i++) {
			const char *piece = s + ms[q.j[i]];
			size_t n = me[q.j[i]] - ms[q.j[i]];

			if (q.vocab[i] != pass)
				continue;
			if (pass && whole_token(b, piece, n, q.h[i])) {
				c++;
				l0_fill(w, piece, n, 1);
				continue;
			}
			/* the slot remember() writes: count_l0 fetched it a whole
			 * batch ago, long evicted; the model run hides this fetch */
			if (w->cache.nslot)
				__builtin_prefetch(&w->cache.slot[q.h[i] & (w->cache.nslot - 1)], 1);
			if ((e = run_model(b, w, piece, n)))
				break;
			v = (uint32_t)w->nsym;
			c += v;
			e = remember(w, piece, n, q.h[i], v);
		}
	}
	*count += c;
	return e;
}

enum err bpe_count(const struct bpe *b, struct bpe_work *w, const char *piece,
		   size_t n, size_t *count)
{
	size_t at = 0;

	return bpe_count_many(b, w, piece, n, &at, &n, 1, count);
}

enum err bpe_encode(const struct bpe *b, struct bpe_work *w, const char *piece,
		    size_t n, uint32_t **ids, size_t *nids, size_t *cap)
{
	enum err e = run_model(b, w, piece, n);

	if (e || !w->nsym) /* every unit may have been dropped */
		return e;
	if (*nids + w->nsym > *cap) {
		size_t c = *cap ? *cap : 256;
		uint32_t *p;

		while (c < *nids + w->nsym)
			c *= 2;
		p = mem_realloc(*ids, c * sizeof(*p));
		if (!p)
			return ERR_NOMEM;
		*ids = p;
		*cap = c;
	}
	memcpy(*ids + *nids, w->ids, w->nsym * sizeof(**ids));
	*nids += w->nsym;
	return ERR_OK;
}

int bpe_byte_level(const struct bpe *b)
{
	return b->o.byte_level;
}

/* Fills b->bloom from b->whole. */
static enum err build_bloom(struct bpe *b)
{
	size_t id, k = 0, bytes = 8;

	for (id = 0; id < b->nr; id++)
		k += b->whole[id / 8] >> (id % 8) & 1;
	while (bytes < k) /* 8 bits per string: about 1 in 9 false positives */
		bytes *= 2;
	if (!(b->bloom = mem_calloc(bytes, 1)))
		return ERR_NOMEM;
	b->nbloom = bytes;
	for (id = 0; id < b->nr; id++) {
		if (b->whole[id / 8] >> (id % 8) & 1) {
			size_t bit = bloom_bit((uint32_t)hash_bytes(b->vocab.arena + b->roff[id],
								    b->rlen[id]), bytes);

			b->bloom[bit / 8] |= (uint8_t)(1u << (bit % 8));
		}
	}
	return ERR_OK;
}

/* Fills b->whole: runs the model on every token's own string (once, when
 * the tokenizer.json is loaded; the cache keeps the result), then its
 * Bloom filter. */
static enum err build_whole(struct bpe *b)
{
	struct bpe_work *w;
	size_t id, n = b->nr;
	enum err e = ERR_OK;

	if (!(b->whole = mem_calloc((n + 7) / 8, 1)))
		return ERR_NOMEM;
	b->nwhole = (n + 7) / 8;
	if (bpe_work_new(&w))
		return ERR_NOMEM;
	for (id = 0; id < n && !e; id++) {
		if (b->rlen[id] == UINT32_MAX || !b->rlen[id])
			continue;
		e = run_model(b, w, b->vocab.arena + b->roff[id], b->rlen[id]);
		if (!e && w->nsym == 1 && w->ids[0] == id)
			b->whole[id / 8] |= (uint8_t)(1u << (id % 8));
	}
	bpe_work_free(w);
	return e ? e : build_bloom(b);
}
