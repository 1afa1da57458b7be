/*
 * sim.h: the hot-row simulator, the one model every face of hotrow shows.
 *
 * A deterministic discrete-event simulation with an integer microsecond
 * clock: requests arrive, take a pooled connection, queue FIFO for a row
 * lock, hold it for the hold time (which includes commit), and release
 * both. Strategies change the write path (naive, sharded, coalesce, queue,
 * redis, append, ledger); faults and bug switches show what the fixes cost.
 *
 * Interface:
 *   struct sim_config c; sim_config_default(&c);  (or sim_scenario())
 *   ... set fields ...
 *   struct sim *s = sim_new(&c);        copies c; NULL if c fails the check
 *   sim_run(s);                          to c.seconds, or sim_advance()
 *   sim_summary(s, &sum); sim_snapshot(s, &snap);
 *   sim_free(s);
 * Same config and seed, same binary: the same events, byte for byte.
 * The TUI reads only sim_snapshot(); it never looks inside struct sim.
 * With c.seconds == 0 arrivals never stop: drive it with sim_advance().
 *
 * Model choices (each file says more):
 *   - a client timeout gives up on the client's side only: an attempt
 *     waiting for a connection leaves that queue, but a statement already
 *     sent waits on for the lock, holds it and commits, keeping its
 *     connection, unless lock_timeout_ms stops it first (as PostgreSQL's
 *     lock_timeout would). A retry after such an unclear outcome applies
 *     the like a second time unless c.idempotent. Retries follow timeouts
 *     and errors, after c.backoff, within c.retry_budget.
 *   - the pool's acquire timeout is an error (failed); the client timeout
 *     is abandoned. Flushers wait for a connection without a timeout.
 *   - other endpoints' traffic is Poisson, whatever c.arrivals says.
 *   - fixes: the like completes at the cheap step; one flush at a time
 *     takes a connection and the row lock for one hold (engine/sim_fix.c).
 *   - the app crash costs only where the app holds the count (coalesce).
 *   - a row lock goes to the oldest waiter unless c.handoff is HERD; a
 *     commit flushes inside its hold unless c.wal_flush_ms gives a shared
 *     log (engine/sim_wal.c). Both are off by default.
 * Books, at every instant: visible + buffered + lost - doubled - unacked
 * == true (acknowledged) count, and offered == completed + failed +
 * abandoned + those still in flight.
 */
#ifndef HOTROW_SIM_H
#define HOTROW_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_MAX_PHASES  8    /* rate schedule steps */
#define SIM_MAX_CRASHES 8    /* scheduled faults */
#define SIM_MAX_CLIENTS 10000  /* closed-loop callers */

enum sim_strategy {
	SIM_NAIVE,     /* every request updates the one counter row */
	SIM_SHARDED,   /* N slot rows, one chosen per request */
	SIM_COALESCE,  /* app buffer, one UPDATE +k every flush_ms */
	SIM_QUEUE,     /* append to a log; consumer applies batches behind a fence */
	SIM_REDIS,     /* INCR in memory, drained atomically every flush_ms */
	SIM_APPEND,    /* insert a row per event, roll up every flush_ms */
	SIM_LEDGER,    /* money: each request is one transaction of c.batch
	                  transfers that credit a fee account of c.rows
	                  sub-accounts (one hold per transaction, one
	                  sub-account picked as a slot); c.refuse_frac of the
	                  transfers are refused at the buyer's balance, before
	                  the fee row, so a transaction whose transfers are all
	                  refused takes no fee lock */
	SIM_NSTRATEGIES
};

enum sim_arrivals {
	SIM_ARRIVE_CONSTANT,   /* evenly spaced */
	SIM_ARRIVE_POISSON,    /* independent, at random */
	SIM_ARRIVE_BURSTY      /* clumps of c.burst at once, the clumps Poisson */
};
enum sim_dist     { SIM_DIST_CONST, SIM_DIST_EXP };
enum sim_slot     { SIM_SLOT_RANDOM, SIM_SLOT_ROUND_ROBIN };
enum sim_backoff  { SIM_BACKOFF_NONE, SIM_BACKOFF_EXP, SIM_BACKOFF_EXP_JITTER };

/* Who gets a row lock its holder lets go of. */
enum sim_handoff {
	SIM_HANDOFF_FIFO,      /* the oldest waiter, alone woken: a lock that wakes
	                          one (an advisory lock, SQLite's file lock with a
	                          busy handler, InnoDB's lock queue) */
	SIM_HANDOFF_HERD       /* every waiter wakes (c.wake_us of CPU each), one
	                          drawn at random wins and the rest sleep again on
	                          it: PostgreSQL's commit waking all who wait on
	                          the holder's transactionid; on c.cores the
	                          losers wake from a run queue, c.cores at a
	                          time, and one still in it is not woken again */
};

/* How the cores (c.cores) take the CPU jobs. */
enum sim_run_queues {
	SIM_RUNQ_SHARED,       /* one run queue all cores serve: a job starts
	                          on any core that is free */
	SIM_RUNQ_PER_CORE      /* a run queue per core: a job goes to a core
	                          drawn at random and stays there, waiting
	                          behind its jobs while another core idles (a
	                          scheduler that neither spreads a woken
	                          process to the idle core nor pulls it there
	                          within one short job) */
};

/* When a commit that goes through the shared log (c.wal_flush_ms > 0)
 * lets go of its row lock. */
enum sim_wal_order {
	SIM_WAL_FLUSH_RELEASE, /* flush the log, then release the row lock:
	                          PostgreSQL */
	SIM_WAL_RELEASE_FLUSH  /* release the row lock when the commit's CPU
	                          part is done, then its client waits for the
	                          flush: InnoDB with the binary log off */
};

enum sim_fault {
	SIM_FAULT_APP,       /* the app process dies: coalesce buffer lost */
	SIM_FAULT_CONSUMER,  /* the consumer dies after applying, before its offset
	                        commit: the batch is redelivered */
	SIM_FAULT_REDIS,     /* the in-memory server restarts empty */
	SIM_NFAULTS
};

/* Requests in the system at once (likes and other endpoints' calls, queued
 * or served). An arrival beyond it is refused at once and counts as
 * failed, as a server at max_connections refuses a new client: this keeps
 * the memory of an endless overload (an unbounded pool, no timeouts)
 * bounded (64 MB per queue at most), while the 1.8 M that a 20-minute
 * viral post queues on one row with no pool still fit. */
#define SIM_MAX_INFLIGHT (1 << 21)
/* The slowest arrival rate a stream may have (one every 1000 s): slower
 * ones' intervals overflow the microsecond clock. 0 turns a stream off. */
#define SIM_MIN_RATE 0.001

struct sim_phase {           /* from at_us on, arrivals come at rps */
	int64_t at_us;
	double rps;
};

struct sim_crash {           /* a fault injected at a simulated time */
	enum sim_fault kind;
	int64_t at_us;
};

struct sim_config {
	/* write path */
	enum sim_strategy strategy;
	int rows;                    /* slots for sharded; 1 otherwise */
	enum sim_slot slot;

	/* load */
	double rps;                  /* arrivals per second (phase 0) */
	enum sim_arrivals arrivals;
	struct sim_phase phases[SIM_MAX_PHASES];  /* later steps of the schedule */
	int nphases;
	double seconds;              /* arrivals stop here; sim_run() then drains
	                                what is in flight. 0 = endless (TUI) */
	double unrelated_rps;        /* other endpoints needing a connection (Poisson) */
	double unrelated_ms;         /* how long they hold it */

	/* the database */
	double hold_ms;              /* row lock hold per update, commit included */
	enum sim_dist hold_dist;
	double work_ms;              /* app work inside the transaction */

	/* the application */
	int pool;                    /* connections; 0 = unbounded */
	double pool_timeout_ms;      /* acquire timeout; 0 = wait forever */
	double client_timeout_ms;    /* the client gives up; 0 = never */
	int retries;                 /* client retries after a timeout */

	/* the fixes */
	double flush_ms;             /* coalesce/queue/redis/append interval */

	/* faults and classic bugs */
	struct sim_crash crashes[SIM_MAX_CRASHES];
	int ncrashes;
	bool bug_no_fence;           /* queue: apply redelivered batches again */
	bool bug_get_then_del;       /* redis: GET then DEL, not GETDEL */

	uint64_t seed;
	double tick_ms;              /* time-series resolution (default 100) */
	char scenario[32];           /* name it came from, "" if none */

	/* closed loop, the time outside the lock, the CPUs */
	int clients;                 /* 0 = open loop at rps; N = callers that each
	                                send one request, wait for its end, think,
	                                and send the next */
	double think_ms;             /* a caller's pause between requests */
	enum sim_dist think_dist;
	double outside_ms;           /* on the connection but outside the row lock:
	                                round trips, parsing, app work (constant) */
	int cores;                   /* CPUs shared by the holds and the outside
	                                work; 0 = CPUs never limit */
	enum sim_run_queues run_queues; /* SHARED (the default) or PER_CORE */
	double cpu_db_ms;            /* CPU per request, part of the hold */
	double cpu_client_ms;        /* CPU per request, part of the outside time */
	int burst;                   /* bursty arrivals: requests per clump (>= 1) */

	/* timeouts and retries that cost what they cost */
	double lock_timeout_ms;      /* the server cancels a statement that waited
	                                this long for one acquisition of the lock,
	                                as PostgreSQL times it: a herd hand-off
	                                that wakes the waiter and puts it to sleep
	                                on the new holder starts its clock again;
	                                0 = never */
	bool idempotent;             /* a retry's second commit changes nothing */
	enum sim_backoff backoff;    /* the pause before a retry */
	double backoff_ms;           /* its base: the first retry's (longest) pause */
	double retry_budget;         /* retries at most this fraction of requests;
	                                0 = no budget */
	int counter_pool;            /* a bulkhead: the counter endpoint's own pool
	                                of this many connections; 0 = share c.pool */

	/* round trips inside the lock, and a version chain (engine/sim_chain.c) */
	double rtt_ms;               /* one round trip between the app and the database */
	int trips_in_lock;           /* round trips while a like holds the row lock:
	                                the lock is held hold_ms + work_ms + K rtt_ms;
	                                0 = one statement, 1 = BEGIN/INSERT/UPDATE/
	                                COMMIT (the UPDATE's reply, the COMMIT) */
	double read_rps;             /* reads of the count (Poisson): a pooled
	                                connection, no row lock; 0 = none */
	double read_ms;              /* a read that touches 2 buffers (a short chain);
	                                each buffer costs read_ms / 2 */
	double snapshot_at_s;        /* an old snapshot opens at this second ... */
	double snapshot_for_s;       /* ... and stays open this long; 0 = never */
	double walk_us;              /* an update walks its row's chain too: this
	                                much longer a hold per heap page of it
	                                beyond the first, in us; 0 = updates do
	                                not walk (the default; PostgreSQL 15
	                                measured about 16) */
	double redis_op_us;          /* redis: one command on the single-threaded
	                                server, in us (4: ~250,000 commands/s);
	                                a measured service time, fractions allowed;
	                                0 = the default */
	/* the ledger (SIM_LEDGER) */
	int batch;                   /* transfers per transaction, one hold each;
	                                0 is taken as 1 */
	double refuse_frac;          /* the fraction refused (insufficient funds),
	                                each at random, from 0 to below 1 */

	/* the hand-off, the shared log, the statement's own bound */
	enum sim_handoff handoff;    /* FIFO (the default) or HERD */
	double wake_us;              /* herd: CPU one woken waiter spends, in us
	                                (on the CPU station when c.cores is set) */
	double wake_lat_us;          /* herd: how long a woken process takes to
	                                reach a core, in us, before its wake's
	                                CPU (the scheduler bringing another core
	                                out of idle for it): the hand-off's
	                                winner and the log's next leader; 0 = at
	                                once */
	double lockmgr_us;           /* herd: how much later the winner's wake
	                                starts for each other waiter woken with
	                                it, in us: PostgreSQL's woken backends
	                                take the lock manager's partition lock
	                                one at a time, to let go of the lock
	                                they were granted and to queue on the
	                                new holder, and the winner takes its
	                                turn among them; 0 = none */
	int herd_lanes;              /* herd, on --cores: how many of a
	                                commit's woken losers run at once; the
	                                others sleep on the lock manager's
	                                partition lock, out of the run queue,
	                                and the winner's wake waits for half
	                                of those woken with it to pass, a
	                                wake each; 0 = as many as cores free, all
	                                in the run queue ahead of the log's
	                                next leader */
	double herd_bias;            /* herd: how strongly the draw favours
	                                the waiters who queued last: the one
	                                r places from the newest end of the
	                                queue is drawn with weight
	                                1 + bias 2^-r; 0 = uniform */
	double cold_after_us;        /* a CPU job that starts on a core idle for
	                                at least this long, in us, pays
	                                cold_us more work (the core coming out
	                                of a deep idle: a virtual machine's
	                                halted vCPU woken by its host, a power
	                                state's exit, caches gone cold); the
	                                core idled last is taken first; 0 =
	                                never (with cores set) */
	double cold_us;              /* that extra work at cold_after_us of
	                                idle, in us ... */
	double cold_per_ms;          /* ... growing by this many us for each
	                                further ms the core idled */
	double contend_us;           /* CPU, in us, that a request spends
	                                because its row was locked when it came
	                                (PostgreSQL: the lock table's entries,
	                                going to sleep and the timers around
	                                it), once per request that waits: a job
	                                on the CPU station beside the holder's
	                                hold, not in it; 0 = none */
	double wal_flush_ms;         /* one flush of the write-ahead log, which
	                                every row's commit shares: one flush at a
	                                time, each taking every commit waiting when
	                                it starts (group commit); hold_ms is then
	                                the hold before the commit's flush.
	                                0 = no shared log: the flush is in hold_ms */
	double wal_cpu_ms;           /* the CPU part of one flush, from its start
	                                (the leader writing the log and calling
	                                fdatasync), on the cores when c.cores is
	                                set; the rest of wal_flush_ms is the
	                                device's; 0 = all the device's. With
	                                a herd every commit the flush
	                                carried pays it too, at its wake */
	enum sim_wal_order wal_order;
	double statement_timeout_ms; /* the server cancels a statement still
	                                waiting for the lock this long after it
	                                first asked, however often it was woken;
	                                0 = never */
};

/* How long a like's update holds its row lock, in ms: the server's work
 * (hold_ms, commit included), the app's work inside the transaction
 * (work_ms), the round trips made while the lock is held and, with a
 * shared log under flush-release, one flush (the least it adds: a commit
 * may also wait for the flush before its own). Under release-flush the
 * flush comes after the lock. */
double sim_lock_ms(const struct sim_config *c);

/* Fill *c with the defaults (naive, 1 row, 2000/s constant, 2 ms holds...). */
void sim_config_default(struct sim_config *c);

/* Fill *c from a named scenario ("viral-post", "viral-video", and a variant
 * per fix such as "viral-post-sharded"). Returns 0, or -1 for an unknown
 * name with *c untouched. sim_scenario_names() is NULL-terminated. */
int sim_scenario(const char *name, struct sim_config *c);
const char *const *sim_scenario_names(void);
const char *sim_scenario_blurb(const char *name);

/* Check a config; on error return -1 and write one line into err naming
 * the field and what it accepts. */
int sim_config_check(const struct sim_config *c, char *err, size_t errlen);

/* Round every time in ms to the whole microseconds the engine counts in,
 * so what a front end shows is the value used (0.0004 ms shows as 0).
 * Call it after sim_config_check: rounding is monotonic, so what the
 * check passed (cpu_db_ms <= hold_ms, timeouts >= 1 us) still holds. */
void sim_config_round(struct sim_config *c);

/* Does a like's request take a row lock (naive, sharded), so that the
 * queueing theory applies to it? The fixes answer no. */
bool sim_strategy_direct(enum sim_strategy s);
/* The rows in the model: c->rows for a sharded path, 1 otherwise. */
int sim_config_rows(const struct sim_config *c);
/* Transfers per request: c->batch on the ledger path (at least 1), 1 otherwise. */
int sim_config_batch(const struct sim_config *c);
/* The fraction of requests that take the row lock: on the ledger path
 * those with at least one transfer not refused, 1 - refuse_frac^batch;
 * 1 otherwise. The lock's demand per request is this times the hold. */
double sim_lock_visits(const struct sim_config *c);
const char *sim_strategy_name(enum sim_strategy s);

/* What a write path is, for every face that names, draws or drives one:
 * ask this, not the strategy's enum value. */
struct sim_strategy_info {
	const char *name;         /* "sharded", as --strategy takes it */
	bool uses_rows;           /* c.rows is its rows (slots, fee sub-accounts) */
	bool spread;              /* a like picks one of several rows as a slot
	                             (sharded): the TUI's screen wants 16 of them */
	const char *row_noun;     /* one of its rows: "row", "slot", "fee row" */
	bool buffered;            /* a like is acknowledged before its row is
	                             written; a periodic flush writes the batch
	                             under the row lock (coalesce, queue, redis) */
	bool flushes;             /* something runs every c.flush_ms: the
	                             buffered paths' flush, append's roll-up */
	const char *blurb;        /* one line: what it does */
	bool batches;             /* a request is a transaction of c.batch
	                             transfers (sales), some refused: counts
	                             and ceilings are in sales (ledger) */
	bool instant;             /* a like is acknowledged without waiting for
	                             anything: a caller of it never waits
	                             (coalesce, queue) */
};
/* The descriptor of s; NULL for a value out of range. */
const struct sim_strategy_info *sim_strategy_info(enum sim_strategy s);
const char *sim_handoff_name(enum sim_handoff h);     /* "fifo", "herd" */
const char *sim_wal_order_name(enum sim_wal_order o); /* "flush-release" */
const char *sim_run_queues_name(enum sim_run_queues r); /* "shared", "per-core" */
int sim_strategy_parse(const char *name, enum sim_strategy *out);
const char *sim_fault_name(enum sim_fault f);
int sim_fault_parse(const char *name, enum sim_fault *out);

/* Mean Value Analysis of the closed loop c describes (c->clients > 0, a
 * naive or sharded write path): N callers that think (think_ms), spend
 * outside_ms on their connection outside the lock, and hold one of the
 * rows for hold_ms + work_ms; a pool smaller than N is a flow-equivalent
 * server; with cores set, a processor-sharing CPU station stretches the
 * CPU parts of holds and outside time (approximate: mean slowdown).
 * Exact without cores for random slots and exponential (or, at the delay
 * station, any) times; approximate with cores or constant times. Writes
 * throughput (per s) and mean time from send to end (ms, think excluded)
 * and returns 0; returns -1 when it does not apply (open loop, a buffered
 * write path, a herd hand-off, a shared log or updates that walk an old
 * snapshot's chain, none of which it models),
 * leaving both at -1. */
int sim_mva(const struct sim_config *c, double *x_per_s, double *r_ms);

struct sim;

/* Make a simulation at t = 0; c is copied. Returns NULL when c fails
 * sim_config_check (call it for the message); aborts only on OOM. */
struct sim *sim_new(const struct sim_config *c);
void sim_free(struct sim *s);

/* Run to c.seconds (which must be > 0), then on until every request in
 * flight has ended; the last, partial tick is closed. */
void sim_run(struct sim *s);
/* Process events up to and including simulated time t_us. */
void sim_advance(struct sim *s, int64_t t_us);
/* Process exactly one event; returns false when none is left before the end. */
bool sim_step(struct sim *s);
int64_t sim_now(const struct sim *s);

/* Live changes, for the TUI and tours: every field of c applies from now
 * on (the old snapshot's times are simulated seconds since t = 0; the
 * rate only when it differs from the rate last set), except the structure
 * the simulation was built on, which sim_set keeps: the fields the table
 * marks not live (engine/sim_field.c: arrivals, burst, the schedule,
 * seconds, faults, seed, tick_ms, clients, cores, counter_pool (its size
 * changes live where it exists), redis_op_us, batch, refuse_frac). A
 * change there needs a new sim (sim_free, sim_new); sim_config_restarts()
 * says whether c asks for one.
 * A fix applies live: a new strategy, rows, pool or timeouts leave what
 * is in flight where it is. Requests already waiting for a connection or
 * a row drain by the write path they arrived under, new arrivals take the
 * new one; rows no longer picked keep their queues until drained; a fix's
 * store goes on being flushed until empty (engine/sim_live.c). */
void sim_set(struct sim *s, const struct sim_config *c);
/* Whether c differs from old in the structure sim_set keeps. */
bool sim_config_restarts(const struct sim_config *old, const struct sim_config *c);
/* Copy that structure from old into c. */
void sim_config_keep(struct sim_config *c, const struct sim_config *old);

/* One field a call of sim_set changed. */
struct sim_change {
	int64_t at_us;            /* the simulated time of the call */
	int set;                  /* which call, from 0: sim_change_config */
	const char *field;        /* its key in sim_json's "config": "pool_timeout_ms" */
	const char *option;       /* the option that sets it: "pool-timeout-ms" */
	char from[32], to[32];    /* the values, as the option writes them */
	bool per_attempt;         /* a timeout: requests already waiting keep
	                             from, new attempts get to */
};
/* What sim_set changed so far, oldest first (*n entries; the pointer
 * holds until the next sim_set). */
const struct sim_change *sim_changes(const struct sim *s, size_t *n);
/* Calls of sim_set so far, a call that changed nothing included. */
size_t sim_change_sets(const struct sim *s);
/* The config call number set was given, and its time in *at_us (if not
 * NULL); NULL past the last. A new sim of the same config that makes the
 * same calls at the same simulated times (sim_advance to at_us, then
 * sim_set) runs the same events: a call's effect depends only on the
 * state, the time and the config. */
const struct sim_config *sim_change_config(const struct sim *s, int set, int64_t *at_us);
/* The latest call's changes in one line, "at 42.0 s: strategy naive ->
 * sharded, rows 1 -> 16. The 2480 likes in flight then ..."; "" before
 * any. Always NUL-terminated. */
void sim_change_text(const struct sim *s, char *buf, size_t len);
/* Inject a fault now (recorded). */
void sim_inject(struct sim *s, enum sim_fault f);

/* The record of a run: every call of sim_set, sim_inject and sim_follow_*
 * (but sim_follow_search) with its simulated time, in order. A sim that
 * resumes a checkpoint (engine/sim_clone.h) has the record up to it; a
 * record taken from the same run further on makes the rest of its calls
 * again at their times:
 *   struct sim_record *r = sim_record_take(s);       a copy of s's record
 *   for (i = sim_record_calls(p); i < sim_record_len(r) &&
 *        sim_record_at(r, i) <= t; i++)
 *           { sim_advance(p, sim_record_at(r, i)); sim_record_apply(p, r, i); }
 *   sim_record_free(r);
 * Each applied call is recorded again in p, so sim_record_calls(p) counts
 * on with it. */
struct sim_record;
struct sim_record *sim_record_take(const struct sim *s);
void sim_record_free(struct sim_record *r);
size_t sim_record_len(const struct sim_record *r);      /* 0 for NULL */
int64_t sim_record_at(const struct sim_record *r, size_t i);
/* Make call i of r on s, now. */
void sim_record_apply(struct sim *s, const struct sim_record *r, size_t i);
/* Calls recorded in s so far. */
size_t sim_record_calls(const struct sim *s);
/* The config the latest sim_set in s's record was given; NULL if none. */
const struct sim_config *sim_record_settings(const struct sim *s);
/* The calls a record keeps. */
enum sim_call {
	SIM_CALL_SET,             /* sim_set(c) */
	SIM_CALL_FAULT,           /* sim_inject(arg) */
	SIM_CALL_FOLLOW_NTH,      /* sim_follow_nth(arg) */
	SIM_CALL_FOLLOW_SLOWEST,  /* sim_follow_slowest() */
	SIM_CALL_FOLLOW_OFF       /* sim_follow_off() */
};
/* Whom the latest sim_follow_* in s's record asked for:
 * SIM_CALL_FOLLOW_NTH a like by its ordinal (the next to arrive),
 * SIM_CALL_FOLLOW_SLOWEST the slowest in flight, SIM_CALL_FOLLOW_OFF
 * nobody (also when the record has no sim_follow_* call). */
enum sim_call sim_record_follow(const struct sim *s);
const struct sim_config *sim_config(const struct sim *s);

/* ---- what comes out ---- */

struct sim_latency { double mean, p50, p95, p99, max; };   /* ms */

enum sim_ceiling {
	SIM_CEIL_ROWS,        /* rows / hold */
	SIM_CEIL_POOL,        /* P connections, each busy hold + outside a request,
	                         and on fewer distinct rows than P with random slots */
	SIM_CEIL_CPU,         /* cores / CPU per request */
	SIM_CEIL_CALLERS,     /* N callers / (one request + think) */
	SIM_CEIL_FLUSH        /* a buffered path: the row sees one write per flush */
};

enum sim_model {
	SIM_MODEL_DD1,        /* constant arrivals and holds: no queue below the ceiling */
	SIM_MODEL_MD1,        /* Poisson arrivals, constant holds */
	SIM_MODEL_MM1,        /* Poisson arrivals, exponential holds */
	SIM_MODEL_GG1,        /* anything else: Kingman's approximation */
	SIM_MODEL_MVA,        /* a closed loop: Mean Value Analysis */
	SIM_MODEL_NONE,       /* a buffered path: no queue on the request path */
	SIM_MODEL_FLUID       /* a rate schedule over a run with an end: the
	                         fluid line of sim_schedule_view */
};

const char *sim_ceiling_name(enum sim_ceiling c);   /* "rows", "pool", ... */
const char *sim_model_name(enum sim_model m);       /* "D/D/1", "G/G/1 (Kingman)", ... */

/* A rate schedule (--schedule 200@0,2000@10) read from the inputs alone,
 * as a fluid line in front of a ceiling of mu a second: arrivals above mu
 * add to the line, below it the line drains at the difference, and after
 * the last arrival (c->seconds) at mu. Times in seconds from the start;
 * -1 where something never happens. */
struct sim_schedule {
	int nsteps;                         /* 1 + the steps before c->seconds */
	struct { double from_s, rps; } step[SIM_MAX_PHASES + 1];
	double mu;                          /* the ceiling the line is served at */
	int peak;                           /* the first step with the highest rate */
	double peak_until_s;                /* the next step, or c->seconds */
	double over_from_s;                 /* arrivals first above mu */
	double line_max, line_max_at_s;     /* the longest line, and when */
	double drained_at_s;                /* that line gone (after the arrivals, maybe) */
	double pool_full_at_s;              /* the line first reaches c->pool (> 0) */
	double pool_growth_per_s;           /* ... growing this fast then */
	double arrivals;                    /* likes the schedule brings by c->seconds */
	double end_s;                       /* the last one done: c->seconds, or drained */
	double throughput_per_s;            /* arrivals / end_s: all done, none failed */
	/* The mean time in system over the arrivals, in ms: each waits for
	 * the line ahead of it to be served (line / mu), then holds the lock;
	 * where a step has no line, the random queue it would have in steady
	 * state (Kingman's formula, none for constant arrivals and holds)
	 * stands in for it; the time outside the lock adds on. < 0 when no
	 * like arrives. Timeouts are left out: everyone waits. */
	double mean_ms;
};

/* Fill *out for c's open-loop arrivals and a ceiling of mu > 0. 1 when c
 * has a schedule (a step after 0 s before c->seconds), else 0 (and *out
 * describes the one rate). */
int sim_schedule_view(const struct sim_config *c, double mu, struct sim_schedule *out);

struct sim_summary {
	uint64_t offered, completed, failed, abandoned;
	double throughput_per_s;
	double worst_wait_ms;                 /* largest lock wait */
	double mean_wait_ms;
	struct sim_latency latency_ms;
	struct {
		int max_in_use, max_waiters;
		double exhausted_at_s;        /* < 0 when never exhausted */
	} pool;
	struct { uint64_t offered, failed; } unrelated;
	struct {
		int64_t true_count, visible, buffered, lost, doubled;
		double max_lag_s;
		int64_t unacked;              /* applied, but the client saw a timeout */
	} count;
	struct {
		double ceiling_per_s, rho;
		double mm1_mean_ms, md1_mean_ms;  /* < 0 when it does not apply (rho >= 1) */
		double growth_per_s;              /* lambda - mu, 0 when stable */
		double pool_full_s;               /* P / (lambda - mu), < 0 if never */
		double little_L, little_lambda, little_W_ms;   /* measured L = lambda W */
		/* closed loop (c.clients > 0): Mean Value Analysis of the same
		 * network; < 0 when it does not apply */
		double closed_throughput_per_s, closed_mean_ms;
		/* which ceiling binds (naive and sharded write paths) */
		double pool_ceiling_per_s;        /* < 0: unbounded pool */
		double distinct_rows;             /* rows P busy connections sit on */
		double cpu_ceiling_per_s;         /* < 0: CPUs not modelled */
		double callers_ceiling_per_s;     /* closed loop: N / (one cycle); < 0 open */
		double binding_per_s;             /* the lowest of the ceilings */
		enum sim_ceiling binding;
		/* the queueing model that matches the config, and its mean time
		 * in system (< 0 when overloaded or a closed loop) */
		enum sim_model model;
		double model_mean_ms;
		double ca2, cs2;                  /* squared coefficients of variation:
		                                     arrivals at one row, holds */
		bool steady;                      /* long enough and not overloaded:
		                                     Little's law describes it */
	} theory;
	uint64_t events;
	/* additions (keep appending here) */
	uint64_t retried;                     /* attempts started again after a timeout or error */
	uint64_t refused;                     /* likes turned away at SIM_MAX_INFLIGHT
	                                         (counted in failed too) */
	uint64_t faults[SIM_NFAULTS];         /* faults injected, by kind */
	double duration_s;                    /* simulated time so far */
	uint64_t in_flight;                   /* likes offered and not yet ended */
	uint64_t orphaned;                    /* attempts the server kept running
	                                         after their client gave up */
	uint64_t orphans_run;                 /* of those, the ones that committed */
	uint64_t lock_timeouts;               /* statements cancelled by lock_timeout */
	uint64_t retries_denied;              /* retries the budget refused */
	struct {
		int max_in_use, max_waiters;
		double exhausted_at_s;        /* < 0 when never exhausted */
	} counter_pool;                       /* the bulkhead's own pool, if any */
	struct {                              /* reads of the count and the chain
	                                         they walk (c.read_rps, c.snapshot_*) */
		uint64_t offered, completed, failed;
		struct sim_latency latency_ms;  /* from arrival, pool wait included */
		double last_ms;                 /* the latest read's own time */
		int64_t versions;               /* the longest chain now (1: only
		                                   the live version) */
		int64_t versions_max;
		int64_t buffers, buffers_max;   /* a read of the count touches */
		int64_t heap_pages;             /* the rows' pages; never shrink */
		bool snapshot_open;
	} reads;
	struct {
		uint64_t transfers;           /* answered: applied + refused */
		uint64_t refused;             /* insufficient funds: nothing written */
		double transfers_per_s;       /* answered transfers per second */
		/* the fee rows: rows x batch / (hold x lock visits), transfers/s */
		double ceiling_transfers_per_s;
	} ledger;                             /* SIM_LEDGER; zero otherwise */
	/* An open loop on a naive or sharded path whose rate schedule steps
	 * before c.seconds (> 0): the fluid view at the binding ceiling, and
	 * theory then follows it: rho is the peak's over the row ceiling,
	 * growth_per_s the peak's over the binding one, pool_full_s when the
	 * line reaches the pool, model SIM_MODEL_FLUID with model_mean_ms its
	 * mean, mm1_mean_ms and md1_mean_ms < 0. nsteps == 0 otherwise (and
	 * in an endless run, where theory describes the rate now). */
	struct sim_schedule schedule;
	uint64_t statement_timeouts;          /* statements cancelled by statement_timeout */
	struct {                              /* the shared log (c.wal_flush_ms > 0) */
		uint64_t flushes, commits;    /* flushes done; commits they carried */
		uint64_t wakes;               /* herd: commits woken on the log */
		double flushes_per_commit;    /* < 0 without a shared log or commits */
	} wal;
	uint64_t wakes;                       /* herd: waiters woken at hand-offs */
	uint64_t contended;                   /* requests that found their row
	                                         locked (c.contend_us each) */
};

void sim_summary(const struct sim *s, struct sim_summary *out);

/* The binding ceiling and its arithmetic in one phrase ("the pool: 100
 * connections land on 69.5 distinct rows of 128 ..."), from a summary of
 * a run of c; always NUL-terminated. */
void sim_binding_text(const struct sim_config *c, const struct sim_summary *o,
                      char *buf, size_t len);

/* One object with "config" and "summary" as DESIGN.md sets out, no newline. */
void sim_json(FILE *out, const struct sim *s);
/* The time series after a header line: one CSV line per tick, or per run
 * of merged ticks once a run passes SIM_SERIES_MAX ticks (sim_series.h). */
void sim_csv(FILE *out, const struct sim *s);

/* ---- following one request (engine/sim_trace.c) ----
 *
 * One like at a time can be followed: the N-th to arrive, the next to
 * arrive, or the one in flight longest now. Its timeline is recorded as
 * it happens and where its time went is added up, place by place, so the
 * parts add up to its latency. Nothing is recorded, and the engine runs
 * as fast as before, while nothing is followed.
 *
 *   sim_follow_nth(s, 500); sim_run(s); sim_trace_get(s, &t);
 *   for (int i = 0; i < t.nevents; i++) sim_trace_line(&t, i, buf, sizeof buf);
 *
 * A headless "slowest" is two runs of the same config: the first with
 * sim_follow_search() finds the slowest completed like's ordinal
 * (sim_follow_found), the second follows that ordinal.
 */

#define SIM_TRACE_EVENTS 48   /* timeline entries kept; later ones are counted */

enum sim_trace_kind {
	SIM_TR_ARRIVED,        /* the like arrived (t = its first try) */
	SIM_TR_PICKED,         /* followed from here on (picked while in flight) */
	SIM_TR_POOL_QUEUE,     /* waits for a connection; arg: position (1 = next) */
	SIM_TR_CONNECTED,      /* got a connection; arg: us it waited for it */
	SIM_TR_OUTSIDE,        /* work outside the lock (round trips, app) */
	SIM_TR_LOCK_QUEUE,     /* joined row's lock queue; arg: position */
	SIM_TR_POSITION,       /* still waiting; arg: position now */
	SIM_TR_WOKEN,          /* a commit woke it (herd); arg: wakes so far */
	SIM_TR_WON,            /* woken, and drawn to be the next holder */
	SIM_TR_LOCKED,         /* got the row lock; arg: us it waited for it */
	SIM_TR_FLUSH_WAIT,     /* its commit waits for the shared log's flush */
	SIM_TR_COMMITTED,      /* committed: done */
	SIM_TR_ACKED,          /* done without the row lock (a fix's cheap step,
	                          an insert, money refused) */
	SIM_TR_POOL_TIMEOUT,   /* no connection within pool_timeout_ms */
	SIM_TR_CLIENT_TIMEOUT, /* its client gave up (client_timeout_ms) */
	SIM_TR_LOCK_TIMEOUT,   /* cancelled by lock_timeout */
	SIM_TR_STMT_TIMEOUT,   /* cancelled by statement_timeout */
	SIM_TR_ERROR,          /* another error ended the attempt */
	SIM_TR_RETRY,          /* tries again; arg: the attempt's number */
	SIM_TR_GAVE_UP,        /* no retry left: it ends failed or abandoned */
	SIM_TR_REFUSED,        /* turned away at arrival (too many in flight) */
	SIM_TR_NKINDS
};

/* Where a followed like's time goes. */
enum sim_trace_where {
	SIM_AT_BEFORE,         /* before it was picked up (place not known) */
	SIM_AT_POOL,           /* waiting for a connection */
	SIM_AT_OUTSIDE,        /* on its connection, outside the lock */
	SIM_AT_LOCK_WAIT,      /* in a row's lock queue (herd wakes included) */
	SIM_AT_HOLD,           /* holding the row lock (its CPU part included) */
	SIM_AT_FLUSH,          /* holding it, its commit waiting for the log */
	SIM_AT_BACKOFF,        /* the pause before a retry */
	SIM_AT_OTHER,          /* the write path's own step (a fix), or between */
	SIM_AT_N
};

enum sim_trace_state {
	SIM_TRACE_NONE,        /* nothing followed */
	SIM_TRACE_WAITING,     /* the like to follow has not arrived yet */
	SIM_TRACE_LIVE,        /* in flight */
	SIM_TRACE_COMPLETED,
	SIM_TRACE_FAILED,      /* an error: a server or pool timeout, refused */
	SIM_TRACE_ABANDONED    /* its client gave up */
};

struct sim_trace_event {
	int64_t t_us;
	int64_t arg;           /* see enum sim_trace_kind */
	int32_t row;           /* the row, where it concerns one; -1 */
	uint8_t kind;          /* enum sim_trace_kind */
};

struct sim_trace {
	int state;                 /* enum sim_trace_state */
	uint64_t n;                /* its ordinal among the likes; 0: unknown */
	int where;                 /* enum sim_trace_where, while live */
	int row;                   /* its row while it waits for, holds or
	                              flushes a lock; -1 */
	int64_t position;          /* in the queue it waits in (1 = next), 0 */
	int64_t first_us, end_us;  /* arrival; the end (-1 while live) */
	int64_t since_us;          /* in where since */
	int64_t spent_us[SIM_AT_N];  /* by place, up to now or the end: they
	                                add up to now (or end) - first_us */
	int tries;                 /* attempts so far */
	uint64_t wakes;            /* herd wakes, in every lock queue it was in */
	int nevents;
	uint32_t dropped;          /* entries past SIM_TRACE_EVENTS, not kept */
	struct sim_trace_event ev[SIM_TRACE_EVENTS];
};

/* Follow the n-th like to arrive (n >= 1, counting from the start; n
 * past those offered so far, or it is never seen). -1 when n <= the likes
 * offered so far, following nothing then. */
int sim_follow_nth(struct sim *s, uint64_t n);
/* Follow the next like to arrive. */
void sim_follow_next(struct sim *s);
/* Follow the like in flight longest now (its earlier places show as
 * SIM_AT_BEFORE). -1 when no like is in flight (nothing followed). */
int sim_follow_slowest(struct sim *s);
void sim_follow_off(struct sim *s);
/* Before a run: note each like's ordinal to find the slowest completed.
 * Costs a small record per like in flight; no trace is kept. */
void sim_follow_search(struct sim *s);
/* After such a run: the ordinal of the like that completed slowest (its
 * latency in *lat_us), 0 when none completed. */
uint64_t sim_follow_found(const struct sim *s, int64_t *lat_us);

/* The followed like's trace, its position and spent_us brought up to
 * now. state SIM_TRACE_NONE when nothing is followed. */
void sim_trace_get(const struct sim *s, struct sim_trace *out);
/* Entry i of t's timeline in words ("joined row 3's lock queue at
 * position 12"), without its time; always NUL-terminated. */
void sim_trace_line(const struct sim_trace *t, int i, char *buf, size_t len);
const char *sim_trace_where_name(enum sim_trace_where w);   /* "lock wait" */
const char *sim_trace_state_name(enum sim_trace_state st);  /* "completed" */
/* The trace as one JSON object (no newline); null when none. */
void sim_trace_json(FILE *f, const struct sim_trace *t);

/* ---- the snapshot the TUI draws ---- */

#define SIM_SNAP_ROWS     64    /* lanes shown; more rows are summarised */
#define SIM_SNAP_WAITERS  48    /* waiters listed per lane, oldest first */
#define SIM_SNAP_POOL     256   /* pool cells listed */
#define SIM_SNAP_SERIES   600   /* most recent ticks */

enum sim_conn_state {                 /* an append's INSERT shows as LOCK_HOLD */
	SIM_CONN_IDLE,
	SIM_CONN_LOCK_WAIT,   /* a request waiting for a row lock */
	SIM_CONN_LOCK_HOLD,   /* holding a row lock (work, update, commit) */
	SIM_CONN_UNRELATED,   /* serving another endpoint */
	SIM_CONN_FLUSH,       /* a flusher/consumer/rollup applying a batch */
	SIM_CONN_OUTSIDE      /* a request's work outside the lock (round trips) */
};

struct sim_lane {
	bool held;
	int64_t holder_age_us;            /* since the holder got the lock */
	int queue_len;                    /* all waiters, not just those listed */
	int nwaiters;                     /* listed below, <= SIM_SNAP_WAITERS */
	int64_t waiter_age_us[SIM_SNAP_WAITERS];
	uint64_t completed;               /* updates applied to this row */
};

struct sim_tick {                         /* one tick of the time series */
	double t_s;
	double offered_per_s, completed_per_s, failed_per_s;
	double p50_ms, p99_ms;            /* latency of requests done in the tick */
	int queue_len;                    /* lock waiters, all rows, end of tick */
	int pool_in_use, pool_waiters;
	double unrelated_failed_per_s;
	int64_t true_count, visible;
};

/* What the flusher of a fix is doing (engine/sim_fix.c). */
enum sim_flusher {
	SIM_FLUSHER_IDLE,        /* waiting for its next interval */
	SIM_FLUSHER_DRAINING,    /* redis GET-then-DEL: has its GET, DEL on its way */
	SIM_FLUSHER_CONN_WAIT,   /* has its batch, waits for a pooled connection */
	SIM_FLUSHER_APPLYING     /* holds the counter row, applying +k (and
	                            committing: a shared log's flush included) */
};

/* The parts of a fix besides the counter row, as the engine models them:
 * one log (one partition) and its consumer, one in-memory counter on one
 * single-threaded server, the app's buffer, the append table, and the
 * flusher that drains each into the row. All zero on the direct paths
 * (naive, sharded, ledger), whose rows are the lanes. */
struct sim_fix_view {
	int64_t pending;             /* acknowledged, not yet in the row */
	/* queue */
	int64_t log_end;             /* events appended to the log */
	int64_t consumer_offset;     /* the consumer's committed offset */
	int64_t fence;               /* the last offset applied, committed in the
	                                row's own transaction (0 with no fence) */
	bool crash_armed;            /* the consumer dies after its next commit */
	/* redis */
	int64_t store_count;         /* the in-memory count, not yet drained */
	int store_queue;             /* INCRs waiting for the server's one thread */
	/* coalesce: the app's buffer; append: rows not yet rolled up */
	int64_t buffer;
	/* the flusher (the consumer, the drain, the rollup) */
	enum sim_flusher flusher;
	int64_t flush_k;             /* the batch it carries */
	bool flush_aborted;          /* its app died: the batch rolls back */
	int64_t row_value;           /* the counter row's count in the database */
};

struct sim_snapshot {
	int64_t now_us;
	struct sim_config config;
	int nrows;                        /* rows in the model */
	int nlanes;                       /* listed, <= SIM_SNAP_ROWS */
	struct sim_lane lanes[SIM_SNAP_ROWS];
	int pool_size;                    /* 0 = unbounded */
	int npool;                        /* listed cells */
	enum sim_conn_state pool_cells[SIM_SNAP_POOL];
	int pool_in_use, pool_waiters;    /* both pools together, with a bulkhead */
	int counter_pool_size;            /* the bulkhead's own pool; 0 none */
	int counter_in_use, counter_waiters;  /* of the totals above, the bulkhead's */
	int nseries;                      /* oldest first */
	struct sim_tick series[SIM_SNAP_SERIES];
	struct sim_summary summary;       /* as sim_summary() now */
	struct sim_trace trace;           /* the request followed, as sim_trace_get() */
	struct sim_fix_view fix;          /* the fix's own parts */
	char change[240];                 /* sim_change_text: the latest live change */
};

/* Fill *out (a large struct: allocate it, don't put it on a small stack). */
void sim_snapshot(const struct sim *s, struct sim_snapshot *out);

#endif
