/*
 * spm — the C face of the sentencepiece library. spm.cc is the only C++ file in
 * needle: it catches every exception and turns util::Status into enum err. The
 * library adds no BOS/EOS unless asked, and that is how needle uses it.
 */
#ifndef NEEDLE_SPM_H
#define NEEDLE_SPM_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct spm;

/* Loads a .model file. Returns a processor the caller frees with spm_free. */
enum err spm_load(const char *path, struct spm **out, struct diag *d);
/* Accepts NULL. */
void spm_free(struct spm *s);
/* Token ids of `len` bytes of `text` (no BOS/EOS), appended as in tok_encode. */
enum err spm_encode(const struct spm *s, const char *text, size_t len,
		    uint32_t **ids, size_t *n, size_t *cap, struct diag *d);
/* BOS id, or -1 when the model has none. */
int spm_bos_id(const struct spm *s);

#endif
