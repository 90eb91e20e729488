/*
 * loadclient — what the client itself cost during a load test, so a report
 * can tell whether needle, not the server, limited the figures (issue 10
 * item 7): the process's CPU time (getrusage user + system) against wall
 * time, per counted or warm-up round of a load case and over the whole run,
 * kept in the manifest:
 *
 *	"load_client": [{"case", "concurrency" or "rate", "level", "round",
 *	                 "cpu_ms", "wall_ms", "probe_ms"}, ...]   one per round
 *	"client": {"cpu_ms", "wall_ms", "cpu_share"}     the whole run
 *
 * A round's window opens once its prompts are built (building them is not
 * the round's work) and closes when the next round's preparation begins or
 * the case ends; cpu_ms / wall_ms is the share of one core the client used.
 *
 * probe_ms is the speed of the measuring machine at the round's start: the
 * CPU time of one fixed piece of work (loadclient_probe), taken before the
 * round's window opens. The same work takes longer on a machine whose
 * neighbours share its cores, caches or host, and a server on that machine
 * slows with it; two runs whose probes differ were measured on machines of
 * different speeds (report/gate.c reads it so).
 */
#ifndef NEEDLE_LOADCLIENT_H
#define NEEDLE_LOADCLIENT_H

#include <cjson/cJSON.h>

#include "base/err.h"

/* An instant: monotonic wall time and the process's CPU time, in ms. */
struct loadclient_mark {
	double wall_ms, cpu_ms;
};

/* The current instant into `m`. */
void loadclient_now(struct loadclient_mark *m);

/* One round of a load case: which, and since when. */
struct loadclient_round {
	const char *case_id;   /* borrowed */
	int open_loop;         /* level is a rate, else a concurrency */
	double level_value;    /* the concurrency or rate */
	int level;             /* its index in the case */
	long round;            /* 0 = warm-up */
	double probe_ms;       /* loadclient_probe() at its start */
	struct loadclient_mark from;
};

/* How much slower or faster than A's the measuring machine may run in B,
 * by the medians of a cell's probes, before the gate asks whether the
 * machine could have made the cell's verdict (report/gate.c;
 * docs/statistics.md, "The measuring machine"). */
#define LOADCLIENT_PROBE_TOL 1.10

/* The CPU time, in ms, of one fixed piece of work (about a millisecond on
 * a current x86-64 core: pseudo-random reads and writes over a 256 KiB
 * table, so the cores' caches count as well as their clock). Uses a static
 * table: one thread at a time. */
double loadclient_probe(void);

/* Appends the round from r->from to now to the manifest's "load_client"
 * (created when missing). ERR_NOMEM. */
enum err loadclient_note(cJSON *manifest, const struct loadclient_round *r, struct diag *d);

/* Sets the manifest's "client" to the run from `from` to now. ERR_NOMEM. */
enum err loadclient_total(cJSON *manifest, const struct loadclient_mark *from,
			  struct diag *d);

#endif
