/*
 * tpl_hub — a model id as vLLM and transformers take it (`--tokenizer
 * deepseek-ai/DeepSeek-V3`), resolved offline from the local Hugging Face
 * cache to the model folder tpl_model.h reads. Nothing is downloaded: a
 * model that is not in the cache is an error that says so.
 *
 * The cache is huggingface_hub's: HF_HUB_CACHE, else HF_HOME/hub, else
 * XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. A model
 * ORG/NAME lives in CACHE/models--ORG--NAME/: refs/REV holds the commit a
 * revision (a branch or tag; "main" by default) points at, and
 * snapshots/COMMIT/ is that commit's folder (its files links into blobs/).
 * A revision that is a commit (40 hex digits) with a snapshot is used as is.
 *
 * A local path wins: an argument that exists on disk is never looked up,
 * as transformers loads a local folder of the same name first.
 */
#ifndef NEEDLE_TPL_HUB_H
#define NEEDLE_TPL_HUB_H

#include "base/err.h"


/* Resolves --tokenizer `arg` with --revision `revision` (NULL: "main").
 * *path is set to a new string the caller frees with mem_free: the
 * snapshot folder, when `arg` is a model id that is not a path on disk; it
 * stays NULL when `arg` is used as it is (a path). ERR_USAGE when
 * `revision` is given and `arg` is not a model id looked up in the cache;
 * ERR_INPUT naming the cache folder and what is missing (the model, the
 * revision's ref, its snapshot); ERR_NOMEM. */
enum err tpl_hub_resolve(const char *arg, const char *revision, char **path, struct diag *d);

/* Where tpl_hub_resolve took `arg` from, given the *path it set: "hugging
 * face cache" (path set), "local folder" (`arg` has a model id's shape and
 * is on disk, so the cache was not read), or NULL (not a model id's shape:
 * a plain path). For saying which one was used. */
const char *tpl_hub_from(const char *arg, const char *path);

#endif
