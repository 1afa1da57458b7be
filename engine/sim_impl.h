/*
 * sim_impl.h: the inside of struct sim, shared by the engine's .c files.
 *
 * Only engine/ includes this. Everything outside reads the simulation
 * through sim.h (sim_summary, sim_snapshot, sim_json). The model is split
 * by concept: sim.c runs the clock, arrivals, callers, the pools and the
 * row locks; sim_fix.c the table of write paths, the flushers and faults;
 * sim_cpu.c the CPUs; sim_out.c turns the state into summaries, snapshots,
 * JSON and CSV; sim_theory.c the formulas and Mean Value Analysis;
 * sim_chain.c round trips inside the lock, reads and the version chain;
 * sim_trace.c following one like; sim_config.c defaults, checks, names
 * and scenarios.
 *
 * Interface (inside the engine only): sim_push() schedules an event;
 * s->path (struct sim_path) says what the strategy's like and flush do;
 * the sim_fix_* hooks are called by sim.c at the fixes' points (a like on
 * a buffered path, a flush, a commit, a fault), and the fixes call back
 * only through s->host (struct sim_host); sim_cpu_add() runs a CPU job,
 * which calls sim_hold_cpu_done() or sim_outside_cpu_done() when done.
 *
 * Conventions: times are int64_t microseconds; "conn" is a pooled database
 * connection; a request holds at most one connection and waits in at most
 * one FIFO at a time (the pool's, or one row's lock queue).
 */
#ifndef HOTROW_SIM_IMPL_H
#define HOTROW_SIM_IMPL_H

#include "engine/sim.h"
#include "engine/sim_heap.h"
#include "engine/sim_fifo.h"
#include "engine/sim_rng.h"
#include "engine/sim_series.h"
#include "util/hist.h"

enum sim_req_kind {
	SIM_REQ_COUNTER,     /* a like: update (or insert, for append) */
	SIM_REQ_UNRELATED,   /* another endpoint that only needs a connection */
	SIM_REQ_READ         /* a read of the count (sim_chain.c) */
};

/* One request's attempt, moved by value through the FIFOs (sim_ring.h):
 * small and plain, so a queue of millions costs 40 bytes each. */
struct sim_req {
	int64_t first_us;    /* when the user first asked (latency is from here) */
	int64_t attempt_us;  /* when this attempt started (client timeout base) */
	int64_t enq_us;      /* when it joined the queue it is in (the lock wait
	                        and statement_timeout count from here) */
	int64_t slept_us;    /* in a lock queue: when its current sleep began,
	                        lock_timeout's base (a herd wake moves it) */
	uint32_t like;       /* its record once an attempt was orphaned, 0 before */
	uint8_t tries;       /* attempts so far, 1 on the first (retries <= 100) */
	uint8_t kind : 2;    /* enum sim_req_kind */
	uint8_t orphan : 1;  /* its client gave up; the server still runs it */
	uint8_t path : 5;    /* the strategy it arrived under: it keeps that
	                        write path when sim_set changes the strategy */
	uint16_t gen;        /* the timeouts its attempt started under, an
	                        index into s->tmo: it keeps them when sim_set
	                        changes them (sim_live.c) */
};
_Static_assert(SIM_NSTRATEGIES <= 32, "struct sim_req's path has 5 bits");
#define SIM_REQ_DEFINED

#include "engine/sim_ring.h"

/* One commit waiting for the shared log (sim_wal.c), by value. */
enum sim_wal_kind {
	SIM_WAL_HELD,        /* its holder keeps row's lock until the flush */
	SIM_WAL_REQ,         /* r let go of row's lock; it waits for the flush */
	SIM_WAL_FLUSHER      /* the fix's flusher let go of row 0's lock */
};
struct sim_wal_entry {
	int row;
	int kind;            /* enum sim_wal_kind */
	struct sim_req r;    /* SIM_WAL_REQ's request */
};

/* How long the GET-then-DEL drain leaves between its two commands: one
 * round trip from the flusher to Redis. */
#define SIM_REDIS_RTT_US 1000
/* One command on the single-threaded in-memory server: ~250,000 ops/s.
 * The default of sim_config.redis_op_us; a driver gives a measured one. */
#define SIM_REDIS_OP_US 4

enum sim_ev {
	EV_ARRIVE,        /* the next like (a timer, not in the heap) */
	EV_UNREL_ARRIVE,  /* the next unrelated request (a timer) */
	EV_PHASE,         /* arg: index into c.phases */
	EV_RELEASE,       /* arg: row; its holder commits */
	EV_LOCK_SWEEP,    /* arg: row; client timeouts at the head of its queue */
	EV_POOL_SWEEP,    /* timeouts at the head of the pool's queue (a timer) */
	EV_CONN_DONE,     /* arg: slab slot; an insert or unrelated call ends */
	EV_REDIS_DONE,    /* arg: redis epoch; the oldest INCR in flight ends */
	EV_REDIS_DEL,     /* the DEL half of a GET-then-DEL drain */
	EV_FLUSH,         /* the periodic flusher / consumer / rollup wakes */
	EV_TICK,          /* close one tick of the time series */
	EV_CRASH,         /* arg: enum sim_fault */
	EV_SEND,          /* a closed-loop caller sends its next request */
	EV_OUTSIDE_DONE,  /* arg: slab slot; the work outside the lock ends */
	EV_CPU,           /* arg: generation; the CPU station's next job ends */
	EV_RETRY,         /* arg: slab slot; a retry's backoff is over */
	EV_POOL2_SWEEP,   /* timeouts at the head of the counter pool's queue */
	EV_READ,          /* the next read of the count arrives */
	EV_WAKE,          /* arg: row; a herd's winner is awake (no CPUs modelled) */
	EV_WAKE_RUN,      /* arg: row; a herd's winner reached a core: its wake's
	                     CPU begins (c.wake_lat_us) */
	EV_WAL            /* the shared log (sim_wal.c): a flush on disk, a wake */
};

/* The busiest events skip the heap. Each of these streams has at most one
 * pending event, kept in a fixed slot that takes its sequence number from
 * the heap's counter, so ties still break in push order. */
enum sim_timer_id { TM_ARRIVE, TM_UNREL_ARRIVE, TM_POOL_SWEEP, SIM_NTIMERS };

/* The events that come a fixed delay after their push (a constant hold,
 * an insert, another endpoint's call, the time outside the lock) go to a
 * FIFO of their own, in time order (sim_fifo.h); one that would come
 * before its FIFO's last goes to the heap. */
enum sim_fifo_id {
	FF_RELEASE, FF_CONN_DONE, FF_OUTSIDE_DONE,
	FF_CALL_DONE,     /* EV_CONN_DONE of another endpoint's call: its own
	                     delay, which would break FF_CONN_DONE's order */
	SIM_NFIFOS
};

struct sim_timer {
	int64_t t;
	uint64_t seq;
	bool on;
};

/* An arrival stream: constant (base + k / rate) or Poisson. */
struct sim_source {
	double rate;          /* per second, 0 = off */
	double period_us;     /* 1e6 / rate */
	int64_t base;         /* constant: time of arrival k = 0 */
	uint64_t k;           /* constant: arrivals since base */
	int64_t last;         /* last arrival, -1 before the first */
	int left;             /* bursty: arrivals still due in this clump */
};

enum sim_holder {
	HOLD_NONE,
	HOLD_REQ,
	HOLD_FLUSH,
	HOLD_WAKING          /* a herd's winner, still waking: the lock is its */
};

struct sim_row {
	int holder;               /* enum sim_holder */
	struct sim_req req;       /* the holder, when HOLD_REQ */
	int64_t got_us;           /* when the holder got the lock */
	struct sim_queue q;       /* FIFO of requests waiting for the lock */
	int64_t sweep_at;         /* pending EV_LOCK_SWEEP time, -1 if none */
	int64_t rest_us;          /* the holder's hold left after its CPU part */
	size_t live_from;         /* q[0..live_from) are orphans: their clients
	                             gave up (deadlines grow along the queue) */
	uint64_t completed;       /* updates applied */
	int64_t value;            /* the row's count */
	/* A herd's losers on the cores (c.cores set): woken, not yet run. */
	uint32_t wake_q;          /* waiting for a core to take their wake */
	uint32_t waking;          /* taking it now, at most c.cores at once */
};

/* The CPU station (sim_cpu.c): processor sharing over c.cores CPUs,
 * as one run queue that all cores serve (c.run_queues SHARED) or as a
 * run queue per core (PER_CORE), a job staying on the core it was put
 * on. In a queue of k cores each job runs at min(1, k / jobs) of a CPU;
 * in virtual time (the work one job has received since the start) every
 * job of a queue advances alike, so its jobs wait in a heap ordered by
 * the virtual time they finish at. */
enum sim_cpu_what {
	CPU_HOLD,                 /* a holder's CPU part (arg: the row) */
	CPU_OUTSIDE,              /* the CPU part outside the lock (arg: slab slot) */
	CPU_WAKE,                 /* a herd's winner waking (arg: the row) */
	CPU_ONLY,                 /* CPU with nothing to do at its end: a log sleeper
	                             waking to sleep again, a request going to sleep
	                             on a locked row */
	CPU_WAKE_QUEUED,          /* a herd's loser from its row's run queue (arg: the row) */
	CPU_WAL                   /* the shared log's flush or wake (arg: sim_wal.c's) */
};

struct sim_cpu_job {
	double vend;              /* virtual time it finishes at */
	uint64_t seq;             /* ties in order of arrival */
	uint32_t what;            /* enum sim_cpu_what */
	uint32_t arg;             /* the row, or the slab slot */
};

/* One run queue and the cores that serve it. */
struct sim_cpu_q {
	double v;                 /* virtual time, microseconds of work */
	int64_t v_at;             /* when v was last brought up to date */
	struct sim_cpu_job *jobs; /* a binary min-heap on (vend, seq) */
	size_t n, cap;
	int cores;                /* the cores serving it */
	uint32_t gen;             /* its pending EV_CPU's arg; 0: none */
	/* cold cores (c.cold_after_us): when each idle core went idle, a
	 * stack with the one idled last on top; cores - n of them */
	int64_t *idle_at;
	int nidle;
};

struct sim_cpu {
	struct sim_cpu_q *q;      /* nq run queues; none without c.cores */
	int nq;
	uint64_t seq;
	uint64_t busy_jobs_us;    /* for the summary: work done so far */
	uint32_t gen;             /* the last EV_CPU's arg; an event whose arg
	                             no queue holds is stale */
	struct sim_rng rng;       /* PER_CORE: the core a job is put on, a stream
	                             of its own that leaves the others' draws */
};

/* A like whose outcome became unclear: one of its attempts was orphaned
 * (the client gave up, the server ran on). Its attempts share this record
 * so that a second commit counts as double. Freed once the like has ended
 * and no orphan of it is left. */
struct sim_like {
	int32_t orphans;          /* orphaned attempts still in the server */
	int32_t applied;          /* commits that changed the row */
	int32_t credited;         /* what the first of them added */
	bool ended;               /* the client is done with it */
	uint32_t next_free;       /* free list */
	uint64_t n;               /* its ordinal, while a search for the
	                             slowest gives every like a record */
};

/* A pool of connections with its FIFO of waiting requests. */
enum { POOL_MAIN, POOL_COUNTER };

struct sim_pool {
	int size;                 /* connections; 0 = unbounded */
	int in_use;
	struct sim_queue waiters; /* FIFO for a connection */
	int64_t first_at;         /* at most the waiters' earliest deadline
	                             (INT64_MAX: none due): a look is due then */
	int64_t sweep_at;         /* pending sweep event, -1 if none */
	bool flusher_waiting;     /* the flusher waits beside the FIFO */
	int64_t flusher_enq;
	int max_in_use, max_waiters;
	int64_t exhausted_at;     /* first time a request had to wait, -1 */
};

/* Per-tick accumulators, reset at each EV_TICK. */
struct sim_tickacc {
	uint64_t offered, completed, failed, unrel_failed;
	struct util_hist lat;
};

/* Following one like (sim_trace.c). Plain data, no pointers: a copy of
 * struct sim copies it whole. The like followed is the one whose record
 * (struct sim_like) is like, on its attempt that is not an orphan. */
struct sim_follow {
	uint64_t want;            /* follow the like with this ordinal when it
	                             arrives; 0: none */
	uint32_t like;            /* the followed like's record; 0: none */
	bool search;              /* every like gets a record and its ordinal */
	uint64_t best_n;          /* the search: slowest completed so far */
	int64_t best_lat;
	size_t hint;              /* its index in its queue is at most this */
	int64_t milestone;        /* a position entry is due at this position */
	struct sim_trace t;
};

/* The timeouts an attempt started under (struct sim_req's gen indexes
 * s->tmo): a change by sim_set applies to attempts that start after it,
 * those waiting keep theirs. 0 = none. */
struct sim_timeouts {
	int64_t pool_us, lock_us, stmt_us;
};
#define SIM_MAX_GENS 65535    /* struct sim_req's gen has 16 bits */

/* One call recorded (sim_live.c): sim_set, sim_inject or a sim_follow_*
 * call (enum sim_call, sim.h); when, what it was given, and the likes in
 * flight then. A copy of struct sim copies these arrays too
 * (changes[0..nchanges), sets[0..nsets)). */
struct sim_live_set {
	int64_t at_us;
	int64_t inflight;
	int what;                 /* enum sim_call */
	int64_t arg;
	struct sim_config c;      /* SIM_CALL_SET's */
};

struct sim;

/*
 * A write path, one row of the table in sim_fix.c: what a like does and
 * what its flusher does, so that the engine asks the table, not the
 * strategy's name.
 */
struct sim_path {
	bool sharded;             /* c.rows slot rows; otherwise one row */
	bool row_lock;            /* the like's request takes a row lock */
	bool needs_conn;          /* the like's request takes a pooled connection */
	bool flushes;             /* a periodic flusher applies what accumulates */
	/* the cheap step that acknowledges a like; NULL: a database step */
	void (*like)(struct sim *s, struct sim_req *r);
	/* a flush takes its store's batch: the increments, 0 for nothing */
	int64_t (*drain)(struct sim *s);
	unsigned faults;          /* 1 << enum sim_fault: the faults that cost it */
	/* the request ends before the row lock (money refused); NULL: never */
	bool (*refused)(struct sim *s);
	/* what a commit adds to its row (applied transfers); NULL: 1 */
	int64_t (*credits)(struct sim *s);
};

extern const struct sim_path sim_paths[SIM_NSTRATEGIES];   /* sim_fix.c */
static inline const struct sim_path *sim_path_of(enum sim_strategy st)
{
	assert((unsigned)st < SIM_NSTRATEGIES);
	return &sim_paths[st];
}

/*
 * What the fixes (sim_fix.c) and the CPUs (sim_cpu.c) may ask of the rest
 * of the engine: a narrow interface, so that sim.c calls into them and
 * never the reverse by name. sim.c fills it in.
 */
struct sim_host {
	void (*complete)(struct sim *s, const struct sim_req *r);   /* a like is done */
	void (*fail)(struct sim *s, struct sim_req *r, bool abandoned);  /* retry or end */
	bool (*take_conn)(struct sim *s);   /* a connection for the flusher, if free */
	void (*wait_conn)(struct sim *s);   /* queue the flusher for one */
	void (*lock_row)(struct sim *s);    /* the flusher, connected, locks row 0 */
	/* for sim_wal.c: the flush carrying row i's commit is done, the
	 * holder releases the row (flush-release) */
	void (*release)(struct sim *s, int i);
	/* for sim_wal.c: the flush carrying a commit that let go of its row
	 * before it (release-flush) is done: its client has the answer */
	void (*durable)(struct sim *s, const struct sim_wal_entry *e);
	/* for sim_cpu.c: a job's CPU part is over (the row, or the slab slot) */
	void (*cpu_done)(struct sim *s, enum sim_cpu_what what, uint32_t arg);
};

struct sim {
	struct sim_config c;
	const struct sim_path *path;      /* sim_path_of(c.strategy) */
	const struct sim_host *host;
	struct sim_rng rng;
	struct sim_heap heap;
	struct sim_timer timers[SIM_NTIMERS];
	struct sim_fifo fifos[SIM_NFIFOS];
	int64_t now, end_us;      /* arrivals stop at end_us (0: never) */
	uint64_t events;

	/* load */
	struct sim_source like, unrel;
	struct sim_rng like_rng, unrel_rng;   /* the arrivals' own streams: two setups
	                             on one seed and one rate see the same arrivals */
	double set_rps;           /* the rate the caller last set (sim_new, sim_set) */
	int64_t hold_us, work_us, unrel_us, flush_us, tick_us;
	int64_t pool_timeout_us, client_timeout_us;   /* 0 = none */
	uint32_t rr_next;         /* round-robin slot */
	int64_t think_us, outside_us, cpu_client_us;  /* closed loop and outside */
	int64_t lock_timeout_us, backoff_us;          /* 0 = none */
	int64_t statement_timeout_us, wake_us, wal_flush_us, wal_cpu_us;
	int64_t wake_lat_us, contend_us;
	double retry_tokens;      /* the budget: + retry_budget per like, - 1 a retry */
	struct sim_cpu cpu;
	double mva_x, mva_r;      /* sim_mva of c, -1 when it does not apply */

	/* rows */
	int nrows;
	struct sim_row *rows;

	/* the pools: their in_use add up to the conn_* states; conn_wait is
	 * also the number of requests in all rows' lock queues */
	struct sim_pool pool[2];  /* POOL_MAIN; POOL_COUNTER with a bulkhead */
	struct sim_pool *counter_pool;   /* the likes' and flusher's pool */
	int conn_wait, conn_hold, conn_unrel, conn_flush, conn_outside;
	bool pool_eager;          /* an event per deadline even when lazy
	                             would do: tests compare the two */

	/* requests that hold a connection for a fixed time (inserts, unrelated):
	 * a slab indexed by EV_CONN_DONE's arg, with a free list */
	struct sim_req *slab;
	uint32_t *slab_free;
	uint32_t slab_cap, slab_nfree;

	/* outcomes of likes */
	uint64_t offered, completed, failed, abandoned, retried;
	uint64_t orphaned, orphans_run, lock_timeouts, retries_denied;
	uint64_t statement_timeouts, wakes, contended;
	int64_t orphans_live;      /* orphaned attempts still in a queue or holding:
	                              not in inflight, but they hold memory */
	struct sim_like *likes;    /* [0] unused: like 0 means "no record" */
	uint32_t likes_n, likes_cap, likes_free;
	int64_t inflight;          /* likes offered and not yet ended */
	int unrel_inflight;
	uint64_t unrel_offered, unrel_failed, unrel_completed;
	struct util_hist lat;      /* latency of completed likes, from first try,
	                              up to the last tick: the tick's own are in
	                              acc.lat, merged at its end (sim_out.c adds
	                              them for a summary between ticks) */
	uint64_t refused;          /* likes turned away at SIM_MAX_INFLIGHT */
	int64_t worst_wait, nwaits;
	double sum_wait;
	double area;               /* integral of inflight dt, for Little's law */
	int64_t area_t;
	double sojourn_sum;        /* time in system of every like that ended */
	uint64_t sojourn_n;

	/* the count: visible + buffered + lost - doubled - unacked == acked */
	int64_t acked, visible, lost, doubled, unacked;
	int64_t max_lag;           /* us between an ack and its visibility */

	/* the fixes (sim_fix.c) */
	int64_t buffer;            /* coalesce: app buffer; append: rows not rolled up */
	int64_t buf_oldest;        /* ack time of the oldest buffered, -1 */
	bool flush_busy;           /* one flush at a time */
	int64_t flush_k;           /* increments the running flush carries */
	int64_t flush_oldest;      /* ack time of its oldest increment */
	bool flush_aborted;        /* its app died: it will roll back */
	int64_t log_end, kafka_off, db_fence, applied_hi, batch_to;
	bool consumer_crash;       /* the next commit dies before the offset commit */
	int64_t redis_val;         /* the in-memory count not yet drained */
	int64_t redis_free;        /* the server is busy until then */
	double redis_free_us;      /* ... exactly (a command may take under 1 us) */
	uint32_t redis_epoch;      /* bumped by a restart */
	struct sim_ring redis_q;   /* INCRs in flight, oldest first */
	uint64_t faults[SIM_NFAULTS];
	uint64_t transfers, ledger_refused;  /* ledger: answered, and of them refused */

	/* the time series */
	struct sim_tickacc acc;
	struct sim_series series;
	int64_t last_tick;

	/* live changes (sim_live.c): the write paths ever in use, whose
	 * stores the flusher drains; the list of changes */
	unsigned paths_used;       /* 1 << enum sim_strategy */
	bool flush_armed;          /* an EV_FLUSH is on its way (it re-arms) */
	bool flusher_lockwait;     /* the flusher, connected, waits for row 0 */
	int64_t appended;          /* append: inserted rows not rolled up yet */
	int64_t flush_kq;          /* of flush_k, the queue's part */
	struct sim_change *changes;
	size_t nchanges, changes_cap;
	struct sim_live_set *sets; /* every call recorded, in order */
	size_t nsets, sets_cap;
	struct sim_timeouts *tmo;  /* by generation; tmo[ntmo - 1] is the current */
	size_t ntmo, tmo_cap;
	bool tmo_lock;             /* some generation has a lock or statement timeout */

	/* round trips in the lock; reads and the version chain (sim_chain.c) */
	int64_t trips_us;          /* c.trips_in_lock round trips of c.rtt_ms */
	struct sim_rng read_rng;   /* reads' own stream: they leave the likes' alone */
	int64_t *versions;         /* per row: versions a read walks (>= 1) */
	int64_t *pages_hi;         /* per row: the most heap pages it ever took */
	uint64_t reads_offered, reads_completed, reads_failed;
	struct util_hist read_lat;
	int64_t read_last_us;      /* the latest read's own time */
	int64_t versions_max, buffers_max;
	uint32_t read_gen;         /* the pending EV_READ's arg; older ones are stale */

	/* the shared log (sim_wal.c): one flush at a time; the commits it
	 * carries, and those waiting for the next one, in the order they
	 * came (a row once under flush-release, as often as it commits
	 * under release-flush); both lists have room for cap */
	struct {
		bool busy;
		int cap;
		struct sim_wal_entry *cur, *next;
		int ncur, nnext;
		uint64_t flushes, commits, wakes;
	} wal;

	/* The herd's losers waiting for a core, all rows together (sim.c):
	 * the log's leader back from its sync runs once those queued before
	 * it have started. */
	struct {
		uint64_t queued;           /* the rows' wake_q, summed */
		uint64_t started;          /* losers' wakes started so far */
		uint64_t sync_at;          /* the leader's turn: started reaching it */
		int64_t sync_us;           /* the leader's wake, us of CPU */
		uint32_t sync_what;        /* its CPU_WAL job's arg */
		bool sync_wait;
	} runq;

	/* one like followed (sim_trace.c): last, away from the hot fields */
	struct sim_follow follow;
};

/* Schedule an event in FIFO f (enum sim_fifo_id), or in the heap if it
 * would come before the FIFO's last. */
static inline void sim_push_fifo(struct sim *s, int f, int64_t t, enum sim_ev type, uint32_t arg)
{
	if (sim_fifo_push(&s->fifos[f], t, s->heap.seq, (uint32_t)type, arg))
		s->heap.seq++;
	else
		sim_heap_push(&s->heap, t, (uint32_t)type, arg);
}

/* Schedule an event. The busiest streams (arrivals, the pool's sweep)
 * have one pending event each, kept in a timer slot; the fixed-delay
 * events go to their FIFO while they come in order; the rest go to the
 * heap. All share the heap's sequence numbers, so ties keep push order. */
static inline void sim_push(struct sim *s, int64_t t, enum sim_ev type, uint32_t arg)
{
	int id;

	switch (type) {
	case EV_ARRIVE:       id = TM_ARRIVE; break;
	case EV_UNREL_ARRIVE: id = TM_UNREL_ARRIVE; break;
	case EV_POOL_SWEEP:   id = TM_POOL_SWEEP; break;
	case EV_RELEASE:      id = SIM_NTIMERS + FF_RELEASE; break;
	case EV_CONN_DONE:    id = SIM_NTIMERS + FF_CONN_DONE; break;
	case EV_OUTSIDE_DONE: id = SIM_NTIMERS + FF_OUTSIDE_DONE; break;
	default:
		sim_heap_push(&s->heap, t, (uint32_t)type, arg);
		return;
	}
	if (id >= SIM_NTIMERS) {
		sim_push_fifo(s, id - SIM_NTIMERS, t, type, arg);
		return;
	}
	s->timers[id].t = t;
	s->timers[id].seq = s->heap.seq++;
	s->timers[id].on = true;
}

/* sim.c */
uint32_t sim_like_new(struct sim *s);   /* a record for a like (struct sim_like) */
int sim_pools_in_use(const struct sim *s);
int sim_pools_waiting(const struct sim *s);

/* sim_fix.c: the hooks sim.c calls at the fixes' points */
void sim_fix_like(struct sim *s, struct sim_req *r);   /* coalesce, queue, redis */
void sim_fix_flush(struct sim *s);                      /* EV_FLUSH */
void sim_fix_commit(struct sim *s);                     /* the flush's commit */
void sim_fix_redis_done(struct sim *s, uint32_t epoch);
void sim_fix_redis_del(struct sim *s);
void sim_fix_insert_done(struct sim *s, struct sim_req *r);  /* append */
void sim_fix_fault(struct sim *s, enum sim_fault f);
int64_t sim_fix_buffered(const struct sim *s);
void sim_fix_view(const struct sim *s, struct sim_fix_view *out);   /* for the snapshot */

/* sim_cpu.c */
void sim_cpu_add(struct sim *s, int64_t work_us, enum sim_cpu_what what, uint32_t arg);
void sim_cpu_done(struct sim *s, uint32_t gen);         /* EV_CPU */
void sim_cpu_init(struct sim *s);   /* after s->c is set, before any job */
void sim_cpu_free(struct sim *s);

/* sim_chain.c: reads of the count, the chain an old snapshot keeps */
void sim_chain_init(struct sim *s);                    /* in sim_new */
void sim_chain_free(struct sim *s);
void sim_chain_grow(struct sim *s, int row);           /* sim_chain_update's work */
int64_t sim_chain_walk(const struct sim *s, int row);  /* sim_chain_walk_us's */
/* An update committed; and the walk it makes, us. Both run at every
 * commit: without a snapshot or a cost a page they cost no call. */
static inline void sim_chain_update(struct sim *s, int row)
{
	if (s->c.snapshot_for_s > 0)
		sim_chain_grow(s, row);
}
static inline int64_t sim_chain_walk_us(const struct sim *s, int row)
{
	return s->c.walk_us == 0 ? 0 : sim_chain_walk(s, row);
}
bool sim_read_next(struct sim *s, uint32_t gen);       /* EV_READ: false if stale */
void sim_chain_rate(struct sim *s);                    /* c.read_rps changed */
int64_t sim_read_start(struct sim *s);                 /* connected: its time, us */
void sim_read_end(struct sim *s, const struct sim_req *r, bool ok);
void sim_chain_summary(const struct sim *s, struct sim_summary *o);

/* sim_wal.c: the shared log */
void sim_wal_init(struct sim *s);                      /* in sim_new */
void sim_wal_free(struct sim *s);
void sim_wal_commit(struct sim *s, const struct sim_wal_entry *e);  /* a commit joins */
void sim_wal_event(struct sim *s, uint32_t what);      /* EV_WAL, CPU_WAL */
/* sim.c: the log's leader wakes from its fdatasync with work_us of CPU;
 * false if no loser is queued ahead of it (then it runs now), true if it
 * waits its turn: a CPU_WAL job of what when it runs. */
bool sim_wake_behind(struct sim *s, int64_t work_us, uint32_t what);

/* sim_trace.c: following one like. sim.c calls these only where
 * sim_followed() says the request is the one followed (or, for the
 * arrival, where its ordinal is follow.want): nothing is done, and no
 * time spent, while nothing is followed. */
static inline bool sim_followed(const struct sim *s, const struct sim_req *r)
{
	return s->follow.like != 0 && r->like == s->follow.like && !r->orphan;
}
void sim_trace_arrive(struct sim *s, struct sim_req *r);   /* offered == want */
void sim_trace_refused(struct sim *s);                     /* offered == want */
/* An entry of kind, and from now on its time goes to where (row: -1 or
 * the row it concerns, arg as enum sim_trace_kind says). */
void sim_trace_note(struct sim *s, enum sim_trace_kind kind, enum sim_trace_where where,
                    int row, int64_t arg);
void sim_trace_fail(struct sim *s, const struct sim_req *r, bool abandoned);
void sim_trace_end(struct sim *s, enum sim_trace_state how);
void sim_trace_herd(struct sim *s, int row, size_t woken);  /* after the draw */

/*
 * The herd's draw: which of w waiters (0 the oldest in the queue, w - 1
 * the newest) wins, from u uniform in [0, 1). The waiter r places from
 * the newest end weighs 1 + B 2^-r: the one that queued last 1 + B, the
 * one before it 1 + B / 2, and those that have waited a few hand-offs
 * about 1 each, drawn uniformly among themselves. The weights sum to
 * S = w + 2 B (1 - 2^-w), and B = 0 is the uniform draw. Walked from the
 * newest end, the extra weight is spent within about 60 places; past
 * that the rest are uniform, and the place follows from u S directly.
 */
static inline size_t sim_herd_pick(double u, size_t w, double bias)
{
	if (w <= 1)
		return 0;
	double total = (double)w + 2 * bias * (1 - exp2(-(double)w));
	double left = u * total, extra = bias;
	size_t r = 0;
	for (; r < w && r < 64; r++, extra /= 2) {
		if (left < 1 + extra)
			return w - 1 - r;
		left -= 1 + extra;
	}
	r += (size_t)left;
	return r < w ? w - 1 - r : 0;
}
void sim_trace_tick(struct sim *s);
void sim_trace_found(struct sim *s, const struct sim_req *r, int64_t lat_us);

/* sim_live.c: changes of strategy and rows while the simulation runs */
/* The write path a request takes: the one it arrived under. */
static inline const struct sim_path *sim_req_path(const struct sim_req *r)
{
	return sim_path_of((enum sim_strategy)r->path);
}
/* In sim_set, once s->c is the new config and its times are set: old is
 * the config before, asked the one sim_set was given. Switch the write
 * path, grow the rows, and record the call and what changed at s->now. */
void sim_live_apply(struct sim *s, const struct sim_config *old,
                    const struct sim_config *asked);
void sim_live_free(struct sim *s);
/* Record a call other than sim_set (what, arg) at s->now. */
void sim_live_call(struct sim *s, enum sim_call what, int64_t arg);
/* The first generation of timeouts (sim_new), or a new one when sim_set
 * changed them: from now on attempts start under s's current ones. */
void sim_live_timeouts(struct sim *s);
/* Rows the snapshot lists: the config's, and any beyond that still hold
 * or queue requests from before a change. */
int sim_live_rows(const struct sim *s);

/* sim_theory.c */
void sim_theory(const struct sim *s, double rps, struct sim_summary *out);

#endif
