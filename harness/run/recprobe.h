/*
 * recprobe — the steps of a recall case that probes the serving stack
 * (issue 12): "jitter": K sends each document at K exact lengths L .. L+K-1,
 * so a bug that depends on the prompt length mod 2, 4 or 8 shows as failures
 * at one residue, each length with codes of its own (their final two
 * letters move on: recprobe_code_shift); "cache": true sends it three times
 * in order, cold, warm (identical) and warm with the projects asked in
 * another order, so a prefix-cache hit that answers unlike the miss fails the
 * warm step. The cold step is cold because the prompt starts with a nonce
 * line no earlier request sent (recprobe_preface): the run's nonce, the
 * session (0, then one more on each --resume) and a tag of the group (case,
 * repeat, seed), placed at the very start of the user content and counted in
 * the exact length. The user content, not a system message: every template
 * renders it, where some have no system role or replace a default system
 * prompt; what comes before it is the template's own opening, the same in
 * every request, so the first tokens that differ are the nonce's. The nonce is drawn once per run folder and kept in the
 * manifest ("cache_probe"), so a resumed run reuses it; run.c journals a
 * group's three records together once its last step ends, so a group an
 * interruption cut is absent and is rerun whole, in a new session, with a
 * cold step that is cold again.
 *
 * Each step is an attempt of its own, keyed by its step id ("ID@L" for a
 * jitter length, "ID/cold", "ID/warm", "ID/warm-reordered"), and its record
 * carries a "probe" object (recprobe_view, record.h) that report.c reads.
 */
#ifndef NEEDLE_RECPROBE_H
#define NEEDLE_RECPROBE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "net/stream.h"
#include "suite.h"

struct record_probe; /* record.h */

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

/* 1 when `step` is the last of a cache group (its records are journalled
 * together then). */
int recprobe_group_ends(const struct suite_recall *rc, int step);

/* How far the final two letters of every code move at `step`
 * (haystack.h's code_shift): 25 places per jitter step, so both letters
 * change from one length to the next; 0 otherwise. */
int recprobe_code_shift(const struct suite_recall *rc, int step);

/* "NONCE.SESSION" of a run: up to 16 hex digits, a dot, the session. */
#define RECPROBE_NONCE_MAX 48
/* The preface line of the attempt (case `id`, repeat, seed) of a cache probe
 * run with nonce `nonce` ("NONCE.SESSION"), ending in a blank line, into
 * out[cap]: "Run NONCE.SESSION, document TAG.\n\n" (TAG: 8 hex digits of
 * the case id, repeat and seed); "" for any other recall case. */
void recprobe_preface(const struct suite_recall *rc, const char *nonce,
		      const char *id, long repeat, long seed, char *out, size_t cap);

/* Adds "cache_probe" {"nonce", "session"} to `manifest` when `s` has a cache
 * probe, and writes "NONCE.SESSION" into out[RECPROBE_NONCE_MAX]: `old` (the
 * manifest of the folder a --resume continues, or NULL) gives the nonce and
 * its session + 1, else `fresh` (16 hex digits) starts session 0. ERR_NOMEM;
 * ERR_INPUT when `old` has a "cache_probe" that is not one. */
enum err recprobe_manifest(cJSON *manifest, const cJSON *old, const struct suite *s,
			   uint64_t fresh, char *out, struct diag *d);

/* The identity of a cache-probe step's document, its nonce left out, for
 * comparing runs: recall.prompt_sha256 differs in every run by design (the
 * nonce line, and the filler re-fitted around it), while what the document
 * is made of does not: recall {tokens, depths, filler} and each needle
 * asked (grade.needles: depth, project, expected code). Returns 0 when
 * record `rec` is no cache-probe step (no "probe"."nonce"); else 1, with
 * out[RECPROBE_DOC_ID] 16 hex digits of their FNV-1a hash, or "" when the
 * record does not list its needles (a step stopped before grading). */
#define RECPROBE_DOC_ID 17
int recprobe_document_id(const cJSON *rec, char out[RECPROBE_DOC_ID]);

/* Refuses (ERR_INPUT, "FILE: cases[N].recall.jitter: ...") a jitter case
 * whose longest length plus max_tokens exceeds `room`, the tokens the server
 * allows (prompt + max_tokens); room < 0 (unknown) accepts it. */
enum err recprobe_check_fit(const struct suite_case *c, long long room,
			    long long max_model_len, const char *file, struct diag *d);

/* The probing step `step` (of the case's own options `rc`) after stream
 * `st`, for its record's "probe" (record.h: struct record_probe; the cache
 * steps' nonce is NONCE.SESSION, borrowed), into *p; 0 for a case of one
 * step (no probe). */
int recprobe_view(const struct suite_recall *rc, int step, const char *nonce,
		  const struct stream *st, struct record_probe *p);

#endif
