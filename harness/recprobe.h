/*
 * recprobe — the steps of a recall case that probes the serving stack
 * (issue 12): "jitter": K sends each document at K exact lengths L .. L+K-1,
 * so a bug that depends on the prompt length mod 2, 4 or 8 shows as failures
 * at one residue; "cache": true sends it three times in order, cold (a
 * per-run nonce in the seed makes a document no earlier run sent), warm
 * (identical) and warm with the projects asked in another order, so a prefix-cache hit that
 * answers unlike the miss fails the warm step.
 *
 * Each step is an attempt of its own, keyed by its step id ("ID@L" for a
 * jitter length, "ID/cold", "ID/warm", "ID/warm-reordered"), and its record
 * carries a "probe" object (recprobe_json) that report.c reads.
 */
#ifndef NEEDLE_RECPROBE_H
#define NEEDLE_RECPROBE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "stream.h"
#include "suite.h"

#define RECPROBE_MAX_JITTER 64
#define RECPROBE_CACHE_STEPS 3

/* Steps per seed: the jitter, 3 for a cache probe, else 1. */
int recprobe_steps(const struct suite_recall *rc);

/* The id of `step` of the case `id` into out[cap]; `id` itself for a case
 * of one step. */
void recprobe_step_id(const char *id, const struct suite_recall *rc, int step,
		      char *out, size_t cap);

/* The exact prompt size of `step`. */
long recprobe_tokens(const struct suite_recall *rc, int step);

/* 1 when `step` asks for the projects in reverse order (the third cache
 * step: a different question whose prompt has the same length, so the
 * document and its cached prefix stay the same). */
int recprobe_reversed(const struct suite_recall *rc, int step);

/* 1 when `step` must wait until nothing else is in flight (the warm steps of
 * a cache probe follow the cold one). */
int recprobe_waits(const struct suite_recall *rc, int step);

/* The document seed of `step`: `seed`, mixed for a cache probe with `nonce`
 * and the case id (so no other case or run sent the same document). */
uint64_t recprobe_seed(const struct suite_recall *rc, const char *id,
		       long seed, uint64_t nonce);

/* The record's "probe" object of `step` (of the case's own options `rc`)
 * after stream `st`, owned, or NULL
 * (out of memory, or a case of one step). Jitter: {"tokens", "offset",
 * "mod2", "mod4", "mod8"}; cache: {"step", "cached_tokens" (null when the
 * server did not report it), "ttft_ms"}. */
cJSON *recprobe_json(const struct suite_recall *rc, int step,
		     const struct stream *st);

#endif
