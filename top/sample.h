/*
 * sample.h: what a live PostgreSQL's lock queues look like right now.
 *
 * The sampler behind `hotrow top`. Each sample reads the server's own
 * views over one connection of its own: pg_locks (tuple and transactionid
 * locks) with pg_blocking_pids() for who waits for whom, pg_stat_activity
 * for every client backend's state and wait, pg_stat_database for commits,
 * and pg_stat_statements, when the extension is installed in the database,
 * for the statements that take the most time. It turns them into the
 * kit's picture: one lane per contended row (the holder and its age, the
 * waiters in the order they lined up: no promise of who gets the row
 * next, see below), the backends as pool cells,
 * per-second rates, and what the sampling itself cost the server.
 *
 * How a row's queue looks in pg_locks (checked on PostgreSQL 15): the
 * first waiter takes the row's tuple lock and then waits, on a
 * transactionid lock, for the holder's transaction to end; every later
 * waiter waits on that tuple lock. So a row with k waiters shows one
 * transactionid wait and k - 1 tuple waits, all naming the same
 * (relation, page, tuple) through the tuple lock. Under load the line
 * churns: each commit makes a new version of the row, and waiters queued
 * on the old version go on to wait for the next holder's transactionid
 * with no tuple lock of their own. So a lane gathers every wait whose
 * chain of blockers (pg_blocking_pids) leads to the same holder, and takes
 * its row's name from the tuple lock of the waiter at its head. (A
 * transaction holding two contended rows therefore shows as one lane.)
 * The waits and the backends are read by two queries, a fraction of a
 * millisecond apart; on a row that changes hands a thousand times a
 * second they can disagree, and one sample may catch a line between two
 * holders (when the holder commits, every transactionid waiter wakes at
 * once and they race for the row again).
 *
 * Interface:
 *   struct top_sampler *ts;
 *   if (top_sampler_open(&ts, url, err, sizeof err) != 0) { puts(err); ... }
 *   struct top_sample s;
 *   while (...) { if (top_sampler_take(ts, &s) != 0) puts(top_sampler_error(ts)); ... }
 *   top_sampler_close(ts);
 * A sampler is used by one thread. Samples are plain data (no pointers):
 * copy them freely.
 */
#ifndef HOTROW_TOP_SAMPLE_H
#define HOTROW_TOP_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define TOP_MAX_LANES    16     /* contended rows kept per sample */
#define TOP_MAX_WAITERS  64     /* waiters listed per row (the count goes on) */
#define TOP_MAX_BACKENDS 512    /* client backends shown as cells */
#define TOP_MAX_STMTS    5      /* statements by total time */

/* What a client backend is doing, as pool cells show it. */
enum top_state {
	TOP_IDLE,          /* connected, no transaction open */
	TOP_ACTIVE,        /* running a statement, not waiting on a lock or I/O */
	TOP_IDLE_IN_TX,    /* a transaction open, no statement running */
	TOP_LOCK_WAIT,     /* waiting for a heavyweight lock (a row, a table) */
	TOP_IO_WAIT,       /* waiting on I/O (a read, WAL to the disk) */
	TOP_HOLDER,        /* holds a row that others wait for */
	TOP_NSTATES
};

struct top_waiter {
	int pid;
	bool on_xid;           /* waits on the holder's transactionid (the first
	                          waiter), else on the tuple lock */
	double wait_ms;        /* since it began waiting (pg_locks.waitstart) */
};

/* One contended row: its holder and the line behind it. */
struct top_lane {
	char relation[64];     /* "posts" or "schema.posts"; "" when unknown */
	int64_t page, tuple;   /* the row's ctid; -1 when no tuple lock names it */
	char key[64];          /* "id=1" from the primary key, "" if not found */
	char query[96];        /* the next waiter's statement (names the table
	                          when no tuple lock names the row) */
	int64_t xid;           /* the holder's transaction, 0 if unknown */
	int holder_pid;        /* 0 when the holder is not known */
	double holder_age_ms;  /* how long its transaction has been open */
	char holder_state[32]; /* "idle in transaction", "active", ... */
	int nwaiting;          /* every waiter, listed or not */
	int nwaiters;          /* waiters listed below, in queue order */
	struct top_waiter waiters[TOP_MAX_WAITERS];
	double oldest_wait_ms;
};

struct top_stmt {
	char query[160];       /* the normalised text, on one line */
	int64_t calls;
	double total_ms, mean_ms;
};

struct top_sample {
	int64_t seq;                    /* 1 for the first sample */
	double gone_s;                  /* how long the server has been gone
	                                   (then nothing else is filled), or -1 */
	int reconnects;                 /* times the sampler connected again */
	double t_s;                     /* seconds since the sampler opened */
	char server[64];                /* "PostgreSQL 15.x", "MariaDB 10.11.x" */
	bool innodb;                    /* MariaDB: lanes from INNODB_LOCKS, every
	                                   waiter on the record lock itself */

	/* the lanes, most waiters first */
	int nlanes, nlanes_total;       /* shown, and every contended row */
	struct top_lane lanes[TOP_MAX_LANES];
	int waiting_now;                /* backends waiting on tuple/xid locks */
	int lock_waits_now;             /* backends waiting on any lock */

	/* client backends (the sampler's own excluded), by pid */
	int nbackends;
	uint8_t backend_state[TOP_MAX_BACKENDS];   /* enum top_state */
	int nstate[TOP_NSTATES];

	/* per second, over the last second or so; < 0 until two samples span
	 * enough time (the server flushes its counters about once a second) */
	double commits_per_s, rollbacks_per_s;
	double new_waits_per_s;         /* lock waits that began since the last
	                                   sample, per second: waits shorter
	                                   than the interval are missed */

	/* pg_stat_statements, when installed here */
	bool have_statements;
	int nstmts;
	struct top_stmt stmts[TOP_MAX_STMTS];

	/* what sampling costs */
	double query_ms;                /* this sample's queries, wall time seen
	                                   by the sampler (round trips included) */
	double server_ms_per_s;         /* pg_stat_statements' execution time of
	                                   the sampler's own queries, per second
	                                   of wall time; < 0 when unknown */
	int64_t own_calls;              /* the sampler's statements so far, as
	                                   pg_stat_statements counts them */
};

struct top_sampler;

/* Connect to url (a libpq URL or conninfo; not SQLite) and name the
 * connection "hotrow top". Returns 0, or -1 with a one-line message in err
 * saying what to do. *out is NULL on failure. */
int top_sampler_open(struct top_sampler **out, const char *url, char *err, size_t errlen);
void top_sampler_close(struct top_sampler *ts);     /* NULL is fine */

/* Take one sample into *s. Returns 0, or -1 when a query failed
 * (top_sampler_error says which and why; *s then holds what was read).
 * When the server has gone away (restarted, shut down, the connection
 * killed) s->gone_s >= 0, the error says so, and each later call tries
 * to connect again (at most once a second) until it is back.
 * The sampler's queries run in one open read-only transaction, a
 * savepoint per sample: they add nothing to pg_stat_database's commits. */
int top_sampler_take(struct top_sampler *ts, struct top_sample *s);
const char *top_sampler_error(const struct top_sampler *ts);

/* The sampler's backend pid, so callers can leave it out of their own
 * reasoning (it is never in a sample). */
int top_sampler_pid(const struct top_sampler *ts);

/* Short names of the states, for legends: "idle", "active", ... */
const char *top_state_name(enum top_state st);

#endif
