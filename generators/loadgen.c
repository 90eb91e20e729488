/*
 * loadgen — exact-length load prompts; see loadgen.h.
 */
#include "loadgen.h"

#include <string.h>

#include "filler.h"
#include "haystack.h"
#include "base/mem.h"
#include "prng.h"

uint64_t loadgen_case_seed(uint64_t seed, const char *case_id)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (; *case_id; case_id++)
		h = (h ^ (unsigned char)*case_id) * 0x100000001b3u;
	h ^= seed;
	return prng_splitmix64(&h);
}

uint64_t loadgen_seed(uint64_t case_seed, unsigned level, unsigned round,
		      unsigned index)
{
	uint64_t x = case_seed;

	x = prng_splitmix64(&x) ^ ((uint64_t)level << 40 | (uint64_t)round << 24 | index);
	return prng_splitmix64(&x);
}

/* The cache's filler for kind `name` (made, or remade for another kind);
 * NULL in *out without a cache. */
static enum err cached_filler(struct loadgen_cache *c, const char *name, struct filler **out,
			      struct diag *d)
{
	enum filler_kind kind = FILLER_PROSE;
	enum err e;

	*out = NULL;
	if (!c)
		return ERR_OK;
	if (name && (e = filler_kind_parse(name, &kind, d)))
		return e;
	if (c->filler && filler_kind_of(c->filler) != kind)
		loadgen_cache_release(c);
	/* the seed is set by each build (filler_reseed) */
	if (!c->filler && (e = filler_new(kind, 0, 1, &c->filler, d)))
		return e;
	*out = c->filler;
	return ERR_OK;
}

enum err loadgen_build(const struct loadgen_opts *o, uint64_t seed,
		       struct loadgen_prompt *out, struct diag *d)
{
	struct haystack_opts h;
	struct haystack hs;
	enum err e;

	memset(out, 0, sizeof(*out));
	memset(&h, 0, sizeof(h));
	if (o->endpoint == LOADGEN_CHAT && !o->tpl)
		return diag_fail(d, ERR_INPUT, "a chat load prompt needs a chat template (--template)");
	if ((e = cached_filler(o->cache, o->filler, &h.reuse, d)))
		return e;
	h.tok = o->tok;
	h.tpl = o->tpl;
	h.kwargs = o->kwargs;
	h.render = o->render;
	h.tokens = o->input_tokens;
	h.seed = seed;
	h.filler = o->filler;
	h.plain = 1;
	h.raw = o->endpoint == LOADGEN_COMPLETIONS;
	h.raw_extra = o->bos_tokens;
	e = haystack_build(&h, &hs, d);
	if (!e) {
		out->tokens = hs.prompt_tokens;
		memcpy(out->sha256, hs.prompt_sha256, sizeof(out->sha256));
		if (h.raw) {
			out->prompt = hs.document;
			out->prompt_len = hs.document_len;
			hs.document = NULL;
		} else {
			out->messages = hs.messages;
			hs.messages = NULL;
		}
	}
	haystack_release(&hs);
	return e;
}

void loadgen_cache_release(struct loadgen_cache *c)
{
	if (!c)
		return;
	filler_free(c->filler);
	c->filler = NULL;
}

void loadgen_release(struct loadgen_prompt *p)
{
	if (!p)
		return;
	mem_free(p->prompt);
	cJSON_Delete(p->messages);
	memset(p, 0, sizeof(*p));
}
